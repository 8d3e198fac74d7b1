"""Lexical retrieval: the BM25 used to draw hard negatives and as a ranking baseline."""

from multivec.retrieval.bm25 import BM25Index, tokenize, top_k_indices

__all__ = ["BM25Index", "tokenize", "top_k_indices"]
