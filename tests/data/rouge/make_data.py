"""Regenerate the ROUGE test data in this folder (needs rouge-score 0.1.2 and nltk 3.10.4).

    python tests/data/rouge/make_data.py /path/to/shared/conformance/mtrag

Writes ``mtrag_rougeL.jsonl`` (RougeL vectors extracted from the MT-RAG
conformance files), ``golden_rouge_score.jsonl`` (rouge-score outputs on
generated pairs, every type, with and without stemmer) and
``porter_nltk.tsv`` (NLTK PorterStemmer on a vocabulary).  The tests read these
files and never run this script.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # tests/

from rouge_textgen import gen_pairs, gen_words  # noqa: E402

TYPES = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]  # every type rouge-score offers


def mtrag(conf: str) -> None:
    rows = []
    with open(os.path.join(conf, "golden", "edge_cases.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if "RougeL_stemFalse" in r:
                rows.append(
                    ("edge_cases.jsonl", r["case"], r["target_or_passage"], r["prediction"], r["RougeL_stemFalse"])
                )
    up = os.path.join(conf, "upstream", "scripts_evaluation_sample_data_responses-10.jsonl")
    with (
        open(up, encoding="utf-8") as fa,
        open(os.path.join(conf, "golden", "responses10_algorithmic.jsonl"), encoding="utf-8") as fb,
    ):
        for la, lb in zip(fa, fb):
            a, b = json.loads(la), json.loads(lb)
            assert a["task_id"] == b["task_id"]
            pred = a["predictions"][0]["text"]
            for k, (t, f) in enumerate(zip(a["targets"], b["metrics"]["RougeL_stemFalse"])):
                rows.append(("responses10_algorithmic.jsonl", f"{a['task_id']}#{k}", t["text"], pred, f))
    with open(os.path.join(conf, "flat", "subset_flat.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            rows.append(
                (
                    "subset_flat.jsonl",
                    f"{r['task_id']}|{r['model_id']}",
                    r["target"],
                    r["prediction"],
                    r["derived_RougeL_recomputed"],
                )
            )
    with open(os.path.join(conf, "flat", "inspectorraget_flat.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            rows.append(
                (
                    "inspectorraget_flat.jsonl",
                    f"{r['task_id']}|{r['model_id']}",
                    r["target"],
                    r["prediction"],
                    r["derived_RougeL"],
                )
            )
    with open(os.path.join(HERE, "mtrag_rougeL.jsonl"), "w", encoding="utf-8") as out:
        for src, key, target, pred, f in rows:
            out.write(
                json.dumps(
                    {"source": src, "id": key, "target": target, "prediction": pred, "fmeasure": f}, ensure_ascii=False
                )
                + "\n"
            )


def golden() -> None:
    from rouge_score import rouge_scorer

    scorers = {stem: rouge_scorer.RougeScorer(TYPES, use_stemmer=stem) for stem in (False, True)}
    with open(os.path.join(HERE, "golden_rouge_score.jsonl"), "w", encoding="utf-8") as out:
        for i, (t, p) in enumerate(gen_pairs(400, seed=20240611)):
            stem = i % 2 == 1
            s = scorers[stem].score(t, p)
            out.write(
                json.dumps(
                    {"target": t, "prediction": p, "use_stemmer": stem, "scores": {k: list(v) for k, v in s.items()}},
                    ensure_ascii=False,
                )
                + "\n"
            )
        # score_multi cases (first max wins)
        multi = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
        pairs = gen_pairs(150, seed=7)
        for j in range(0, 150, 3):
            targets = [pairs[j][0], pairs[j + 1][0], pairs[j][0]]
            p = pairs[j + 2][1]
            s = multi.score_multi(targets, p)
            out.write(
                json.dumps(
                    {
                        "targets": targets,
                        "prediction": p,
                        "use_stemmer": False,
                        "scores": {k: list(v) for k, v in s.items()},
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


def porter() -> None:
    from nltk.stem.porter import PorterStemmer

    st = PorterStemmer()
    words = []
    with open(os.path.join(HERE, "mtrag_unigrams.tsv"), encoding="utf-8") as fh:
        words = [line.split("\t")[0] for line in fh]
    words += gen_words(6000, seed=3)
    seen = set()
    with open(os.path.join(HERE, "porter_nltk.tsv"), "w", encoding="utf-8") as out:
        for w in words:
            if w not in seen:
                seen.add(w)
                out.write(f"{w}\t{st.stem(w)}\n")


if __name__ == "__main__":
    mtrag(sys.argv[1])
    golden()
    porter()
