"""Documents for the probability gain (NUGGET §5.3): word windows of WikiText-2 test articles, as real text
with <unk> as the NUGGET encoder tokenizer's unknown token (multivec.data.wikitext.read_wikitext)."""
from multivec.data.wikitext import read_wikitext
from multivec.io import write_jsonl
from multivec.nugget.analysis.probability_gain import word_windows
from multivec.io.resources import load_tokenizer
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    wanted = dict(zip(p.lengths, p.documents))
    unknown_token = load_tokenizer(snakemake.params.encoder).unk_token
    rows = word_windows(read_wikitext(snakemake.input.text, unknown_token), wanted, p.seed)
    for length, count in wanted.items():
        have = sum(r["length"] == length for r in rows)
        if have < count:
            log.warning("only %d windows of %d words in %s (asked for %d)", have, length, snakemake.input.text, count)
        log.info("length %d: %d documents", length, have)
    write_jsonl(snakemake.output.documents, rows)
