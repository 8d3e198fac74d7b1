"""Document embedding by distillation (Burian 2023): a long-input student learns from a structural teacher
(SBERT) and a contextual teacher (Paragraph Vector).

Modules, each tied to a part of the thesis:
- ``configuration``: ``StudentConfig`` (the student and its heads) and ``LossConfig`` (the losses and their
  combination), the ``model`` section of a trained student's ``config.json``;
- ``student``: ``Student`` (§3.1, §4.1: backbone, mean pooling across chunks) and ``embed_texts``;
- ``projection``: the projection heads and their fitted starts (least squares, Procrustes, linear CCA);
- ``combination``: combining L_S and L_C with the length mask (§3.1, eq. 3.1);
- ``training``: the model (student + heads + losses), resumable ``train`` (§4) and ``embed_documents``;
- ``embeddings``: the embeddings artifact every teacher, student and evaluation reads and writes;
- ``inspector``, ``student_inspector``: the inspectors of the teachers' and the students' artifacts;
- ``losses``: the structural and contextual losses, one module each (§3.1, §4.3.2);
- ``teachers``: the structural (SBERT) and contextual (Paragraph Vector) teachers (§3.2);
- ``data``: the training documents, the demo evaluation tasks and IMDB (§3, §5);
- ``evaluation``: the demo tasks' metrics per unit (§5) and the thesis's classification head (§5.1.1);
- ``analysis``: the students' embedding geometry and training curves, beyond the tables;
- ``tables``: the teacher, distillation and IMDB tables and their statistics.
"""
