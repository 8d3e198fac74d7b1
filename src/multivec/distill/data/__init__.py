"""The document sets of the distillation work (Burian 2023), each a JSONL file of ``{"id", "text"}`` rows:

- ``documents``: the student's training documents (§3) and the demo evaluation tasks with their gold (§5);
- ``imdb``: IMDB sentiment (§5.1.1), read from the official archive and written as two labelled document sets.
"""
