import os

from multivec.nugget.encoding import write_nugget_encodings
from multivec.nugget.frozen_bottom import read_bottom_states
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.sentence_share import document_sentence_ends
from multivec.io.resources import data_mirror, default_device
from multivec.tasks.ranking_task import RankingTask
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    p = snakemake.params
    task = RankingTask.load(os.path.dirname(snakemake.input.task))
    ids = task.used_document_ids()
    texts = [task.documents[doc_id] for doc_id in ids]
    model_dir = os.path.dirname(snakemake.input.config)
    model = NuggetModel.from_pretrained(model_dir, device=default_device())
    ends = None
    if model.rule_selector is not None and model.rule_selector.kind == "sentence_boundary":
        ends = document_sentence_ends(texts, data_mirror())  # evaluation documents carry no sentence ends
        log.info("punkt: %.2f sentences per document", sum(map(len, ends)) / max(1, len(ends)))
    frozen = snakemake.input.get("frozen_bottom")
    write_nugget_encodings(snakemake.output[0], ids, texts, model, batch_size=p.batch_size, max_tokens=p.max_tokens,
                           info={"model_dir": model_dir}, bf16=p.bf16,
                           bottom=read_bottom_states(frozen) if frozen else None, sentence_ends=ends)
