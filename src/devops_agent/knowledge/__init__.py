"""Knowledge: chunk, index and retrieve code, runbooks and postmortems (hybrid BM25 + dense).

Capability layer: the index, chunkers and retrievers work without any model or network. Dense
retrieval (``dense``) needs the ``knowledge-dense`` extra, the Confluence source (``confluence``)
the ``confluence`` extra, and the findings memory (``memory``) reads the store; none of the three
is imported here. Nothing here may import policies, agent or interface modules.
"""

from devops_agent.knowledge.chunking import Chunk, chunk_text
from devops_agent.knowledge.index import COLLECTIONS, Hit, IndexStats, KnowledgeIndex
from devops_agent.knowledge.search import hybrid_search, rrf
from devops_agent.knowledge.sources import DirectorySource, Document, Source
from devops_agent.knowledge.tokenize import tokenize
from devops_agent.knowledge.walker import walk

__all__ = [
    "COLLECTIONS",
    "Chunk",
    "DirectorySource",
    "Document",
    "Hit",
    "IndexStats",
    "KnowledgeIndex",
    "Source",
    "chunk_text",
    "hybrid_search",
    "rrf",
    "tokenize",
    "walk",
]
