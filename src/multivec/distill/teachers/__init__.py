"""The teachers of the distillation work (Burian 2023, §3.2):

- ``sbert``: the structural teacher, a Sentence-BERT model (all-mpnet-base-v2 or all-MiniLM-L6-v2; §3.2.1);
- ``paragraph_vector``: the contextual teacher, Paragraph Vector as gensim's ``Doc2Vec`` (§3.2.2), trained,
  saved and inferred;
- ``doc2vec_files``: a trained ``Doc2Vec`` stored without pickle (safetensors + JSON), for ``paragraph_vector``.
"""
