"""Knowledge: chunk, index and retrieve code, runbooks and postmortems (hybrid BM25 + dense).

Capability layer: the index, chunkers and retrievers work without any model or network; dense
retrieval is the optional ``knowledge-dense`` extra. Nothing here may import policies, agent or
interface modules.
"""

from devops_agent.knowledge.chunking import Chunk, chunk_text
from devops_agent.knowledge.index import COLLECTIONS, Hit, IndexStats, KnowledgeIndex
from devops_agent.knowledge.search import hybrid_search, rrf
from devops_agent.knowledge.tokenize import tokenize
from devops_agent.knowledge.walker import walk

__all__ = [
    "COLLECTIONS",
    "Chunk",
    "Hit",
    "IndexStats",
    "KnowledgeIndex",
    "chunk_text",
    "hybrid_search",
    "rrf",
    "tokenize",
    "walk",
]
