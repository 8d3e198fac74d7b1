# Atomic-fact retrieval on PropSegment dev with one encoder: an untrained backbone with an App. C.1
# encoding (rule subencoder_eval_base), a trained SubEncoder (subencoder_eval_trained), a trained
# SubEncoder with segmenter-predicted queries (subencoder_eval_predicted, Table 8), or the lexical
# baseline without a model (subencoder_eval_lexical). Every protocol's scores are kept (evaluation.PROTOCOLS);
# each query's rankings go to the rankings JSONL beside the JSON (evaluation.retrieval.ranking_rows).
import os
import time

from multivec.io import read_json, write_json, write_jsonl
from multivec.subencoder.evaluation.retrieval import evaluate, evaluate_lexical, predicted_queries
from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    rs = build_retrieval_set(os.path.dirname(snakemake.input.relationships))
    log.info("retrieval set: %s", rs.counts)
    started = time.perf_counter()
    rankings = []
    if snakemake.rule == "subencoder_eval_lexical":
        result = {"kind": "lexical", "scoring": "word_jaccard", **evaluate_lexical(rs, rankings=rankings)}
    elif snakemake.rule == "subencoder_eval_base":
        batch_size = int(snakemake.params.batch_size)
        strategy = snakemake.wildcards.strategy
        model = SubEncoder.from_backbone(SubEncoderConfig(encoder=snakemake.params.encoder, head="none",
                                                          max_tokens=int(snakemake.params.max_tokens)))
        result = evaluate(model, rs, strategy=strategy, batch_size=batch_size, rankings=rankings)
        result.update(kind="base", encoder=snakemake.params.encoder, strategy=strategy)
    else:
        batch_size = int(snakemake.params.batch_size)
        model = SubEncoder.load(os.path.dirname(snakemake.input.model))
        result = {"kind": "subencoder", "model": os.path.dirname(snakemake.input.model), "strategy": "mask_pooling"}
        fitted = read_json(os.path.join(result["model"], "config.json")).get("pca")
        if fitted:  # Table 5's PCA row: what its projection was fitted on (subencoder_model_pca)
            result["pca"] = fitted
        if snakemake.rule == "subencoder_eval_trained":
            result.update(evaluate(model, rs, batch_size=batch_size, rankings=rankings))
        else:
            # App. A.3 alignment of each predicted proposition's text to its sentence (char spans).
            from multivec.subencoder.data.alignment import align_pair
            from multivec.subencoder.data.segmentation import segmenter_from_config

            segmenter = segmenter_from_config(snakemake.params.segmenter, snakemake.params.segmenter_settings,
                                              snakemake.params.llm)
            log.info("Table 8 segmenter: %s%s", segmenter.name, " (demo stand-in)" if segmenter.stand_in else "")

            def segment(sentences):
                # A failed generation (None) predicts no proposition for that sentence.
                return [claims or [] for claims in segmenter.segment(sentences)]

            alignment = snakemake.params.alignment  # the training segments' App. A.3 mode

            def align(sentence, proposition):
                return align_pair(sentence, proposition, mode=alignment)

            queries, rows = predicted_queries(rs, segment, align,
                                              float(snakemake.params.match_jaccard))
            if not rows:
                raise ValueError(f"segmenter {snakemake.params.segmenter!r}: no predicted proposition matches a gold "
                                 f"query at Jaccard > {snakemake.params.match_jaccard}")
            parts = {"gold": [], "predicted": []}  # each part's rankings, told apart by the rows' "part"
            result.update(segmenter=snakemake.params.segmenter, alignment=alignment, all_queries=len(rs.queries),
                          gold=evaluate(model, rs, batch_size=batch_size, query_rows=rows, rankings=parts["gold"]),
                          predicted=evaluate(model, rs, batch_size=batch_size, queries=queries, query_rows=rows,
                                             rankings=parts["predicted"]))
            rankings = [{"part": part, **row} for part, rows_of_part in parts.items() for row in rows_of_part]
    result["retrieval_set"] = rs.counts
    result["seconds"] = round(time.perf_counter() - started, 1)
    write_json(snakemake.output.json, result)
    write_jsonl(snakemake.output.rankings, rankings)
    shown = result.get("proposition") or result["predicted"]["proposition"]
    log.info("%s: %s", snakemake.output.json, {k: round(v, 2) for k, v in shown.items()})
