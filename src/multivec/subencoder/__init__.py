"""The sub-sentence encoder (Chen et al. 2023), laid out like a ``transformers`` model folder:

- ``configuration``: ``SubEncoderConfig`` (backbone, head, output dimension, training length);
- ``model``: ``SubEncoder`` (§3.1: encoder, mask pooling, MLP head), its encoding strategies and its folder;
- ``masks``: proposition character spans -> subword masks, the input the model pools over;
- ``training``: reading, tokenising and collating training rows, and the training task (§3.2, App. B);
- ``pca_projection``: Table 5's PCA row, the trained model followed by a fitted linear projection;
- ``inspector``: the inspectors of the training data's files;
- ``losses``: the training loss (supervised contrastive, §3.2);
- ``data``: the training-data builders (§3.3, App. A): sentence pairs, segmentation, alignment, NLI labels;
- ``evaluation``: atomic-fact retrieval (§4.2.1), C-STS (§4.2.2), segmentation quality (App. A.4);
- ``tables``: the paper's Tables 1, 3, 4, 5, 7, 8 and their rows and per-unit scores.

Shared metrics (P@1, R@k, cosine) live in ``multivec.metrics``.
"""
