"""Analyses of the distilled students beyond the tables (Burian 2023):

- ``geometry``: each row's embedding space, its mean pairwise cosine and its agreement with each teacher;
- ``loss_curves``: the students' training curves, whether every loss term falls.
"""
