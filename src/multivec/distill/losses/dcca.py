"""Contextual loss L_C as Deep CCA (Burian 2023, §4.3.2 "Deep CCA"): CCA (eq. 4.2-4.3) on the outputs of
two projection networks, one over the student's embedding and one over the contextual teacher's.

The loss itself is ``CCALoss``; what makes it *deep* is where it is applied: ``DistillModel`` passes both
sides through their projection heads (``distill.student.contextual_head`` and
``distill.student.teacher_head``) before it, while plain ``cca`` compares the student's projection with the
teacher's embedding as it is.
"""

from __future__ import annotations

from multivec.distill.losses.cca import CCALoss


class DCCALoss(CCALoss):
    """CCA over projected embeddings; the model projects the teacher side too (``projects_teacher``)."""

    projects_teacher = True
