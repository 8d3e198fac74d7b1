"""Evaluating the sub-sentence encoder and its segmenters (Chen et al. 2023):

- ``retrieval_set``: the atomic-fact retrieval set rebuilt from PropSegment's dev split (§4.2.1);
- ``retrieval``: atomic-fact retrieval (§4.2.1, §5.2, §5.4, App. C): encode, rank, score per query and protocol;
- ``unit_ranking``: ranking units (propositions, sentences, documents) per query and their P@1 / R@k;
- ``csts``: conditional STS (§4.2.2, Table 3);
- ``segmentation_quality``: segmentation P/R/F1 against PropSegment (App. A.4, Table 7).

The generic metrics (P@1, R@k, cosine) are ``multivec.metrics``'.
"""
