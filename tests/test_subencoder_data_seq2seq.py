"""The distilled seq2seq segmenter (App. A.2) trains on the project's engine and loads back."""
import json

from multivec.io.resources import load_tokenizer
from multivec.subencoder.data.segmentation import Seq2SeqSegmenter
from multivec.subencoder.data.segmenter_distillation import seed_examples, train_segmenter


def tiny_t5(folder):
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = load_tokenizer("minilm")
    config = T5Config(vocab_size=tokenizer.vocab_size, d_model=16, d_kv=8, d_ff=32, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.sep_token_id, decoder_start_token_id=tokenizer.pad_token_id)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_segmenter_distils_from_llm_rows_and_loads_with_from_pretrained(tmp_path):
    rows = [{"id": f"s{i}", "sentence": f"Town {i} lies in a valley, which floods.",
             "propositions": [{"text": f"Town {i} lies in a valley"}, {"text": "the valley floods"}]}
            for i in range(6)] + [{"id": "dropped", "sentence": "x", "propositions": []}]
    assert seed_examples(rows)[0] == ("Town 0 lies in a valley, which floods.",
                                      "1. Town 0 lies in a valley 2. the valley floods")
    assert len(seed_examples(rows)) == 6
    out = tmp_path / "segmenter"
    summary = train_segmenter(tiny_t5(tmp_path / "base"), rows, out, lr=1e-3, batch_size=2, epochs=2, seed=0,
                              dev_fraction=0.34, device="cpu", eval_every=2, checkpoint_every=2)
    metrics = (out / "metrics.csv").read_text().splitlines()
    assert len(metrics) > 1 and summary
    assert json.loads((out / "config.json").read_text())["model_type"] == "t5"
    result = Seq2SeqSegmenter(str(out), max_new_tokens=8).segment(["A town lies in a valley."])
    assert len(result) == 1 and (result[0] is None or all(isinstance(c, str) for c in result[0]))
