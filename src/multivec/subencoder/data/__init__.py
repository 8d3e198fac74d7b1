"""The sub-sentence encoder's training-data builders (Chen et al. 2023, §3.3 and App. A), in pipeline order:

- ``propsegment``: reading PropSegment v1 (sentences, human segmentations): the demo pairs and the oracle segmenter;
- ``sentence_pairs``: unlabelled sentence pairs from comparable text (§3.3, the pipeline's input);
- ``llm_client``: the cached chat client and the App. A.1 segmentation prompt;
- ``segmentation``: sentences -> propositions (LLM, distilled seq2seq, clause and oracle segmenters; §3.3 step 1);
- ``segmenter_distillation``: training the seq2seq segmenter on the LLM's outputs (App. A.2);
- ``alignment``: propositions -> character spans of their sentence (App. A.3);
- ``nli``: positive proposition pairs by bidirectional entailment (§3.3 step 2);
- ``training_rows``: the training and dev rows (labels, dev split) the model's training reads.
"""
