"""Evaluating document embeddings in the distillation work (Burian 2023, §5):

- ``demo_tasks``: Lee similarity, polarity and the PI/RR ranking tasks, scored per evaluation unit (``METRICS``;
  imported by the workflow while it parses: numpy only, no torch);
- ``classification_head``: the thesis's classification head on frozen embeddings (IMDB, §5.1.1).
"""
