"""How far can re-weighting the offline signals go? A learned-ranker ceiling on LoCoMo.

Recollection's assembly ranks memories with a hand-set linear score (rho). This
script asks whether *any* linear weighting of the signals the offline pipeline
has would rank evidence much better. For every question it scores every unit of
the conversation (not just the first-hop pool) with 25 generic features, in
groups:

* ``alignment``: query cosine and BM25, each alone and as the best session
  neighbour's (1 and 2 turns away), the cosine's z-score, "any BM25 match";
* ``cues``: the memory's speaker is a person the query names, it mentions one,
  time similarity to a time in the query (and whether there is one), names in the query;
* ``session``: the session's best and top-3 mean cosine, its best BM25;
* ``graph``: typed-graph neighbours (semantic, structural) among the top 10 by
  rho, the best cosine to those 10, cosine to the centroid of the top 5 (PRF);
* ``rank``: log-ranks of cosine, BM25 and rho; ``prior``: log word count;
  ``rho``: the recommended RecallConfig() score itself, over the whole namespace.

It then fits a logistic regression (numpy, Newton's method, L2) leave one
conversation out on the tuning split, and once on the whole tuning split for
the held-out three, and reports turn-level ``recall_all@k`` (categories 1-4)
and the learned weights. A second fit without the graph group measures what
the graph adds to a ranker that may weight it freely. Embeddings come from the
tuning loop's cache (``scripts/tune_locomo.py``).

    python scripts/ranker_ceiling.py ../shared/data/locomo/locomo10.json \
        --out results/ranker_ceiling.json --md docs/ranker_ceiling_table.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from tune_locomo import CachedEmbeddings

from langchain_ripplemem.bench.loaders import LOCOMO_TUNE, load_locomo
from langchain_ripplemem.bench.metrics import covered_turns, recall_all
from langchain_ripplemem.config import RecallConfig, WriteConfig, context_weights
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.memory_graph.scoring import time_similarity
from langchain_ripplemem.recall.assembly import _speaker, aligner, cue_bonus
from langchain_ripplemem.recall.cues import move_speakers, rule_based_cues
from langchain_ripplemem.recall.smoothing import best_away, neighbour_rows, speakers

GROUPS = {
    "alignment": ["cos", "cos_nb1", "cos_nb2", "cos_z", "bm25", "bm25_nb1", "bm25_nb2", "bm25_any"],
    "cues": ["speaker_named", "mentions_named", "time_sim", "query_has_time", "names_in_query"],
    "session": ["session_cos_max", "session_cos_top3", "session_bm25_max"],
    "graph": ["semantic_nb_top10", "structural_nb_top10", "cos_top10_max", "cos_top5_centroid"],
    "rank": ["log_rank_cos", "log_rank_bm25", "log_rank_rho"],
    "prior": ["log_words"],
    "rho": ["rho"],
}
FEATURES = [name for names in GROUPS.values() for name in names]
CATEGORIES = ["multi-hop", "temporal", "open-domain", "single-hop"]
KS = (5, 10, 30)


def _log_rank(scores: np.ndarray) -> np.ndarray:
    rank = np.empty(len(scores))
    rank[np.argsort(-scores, kind="stable")] = np.arange(len(scores))
    return np.log1p(rank)


def conversation_features(memory: RippleMemory, conv) -> list[tuple[np.ndarray, np.ndarray, dict]]:
    """``(features, labels, meta)`` per question with evidence: one row per unit."""
    namespace, cfg = (conv.id,), RecallConfig()
    view = memory.index.view(namespace)
    n, matrix, units = len(view.ids), view.matrix, view.units
    neighbours = neighbour_rows(view)
    turns = [next(iter(covered_turns([u])), None) for u in units]
    sessions: dict[str, list[int]] = {}
    for row, unit in enumerate(units):
        sessions.setdefault(unit.source.session_id, []).append(row)
    adjacency = {"semantic": np.zeros((n, n), np.float32), "structural": np.zeros((n, n), np.float32)}
    for a, b, data in memory.graph(namespace).edges(data=True):
        if a in view.pos and b in view.pos:
            for etype in data.get("types", {}):
                adjacency[etype][view.pos[a], view.pos[b]] = adjacency[etype][view.pos[b], view.pos[a]] = 1
    words = np.log1p([len(u.restatement.split()) for u in units])
    out = []
    for q in conv.questions:
        if not q.evidence:
            continue
        cues = move_speakers(rule_based_cues(q.question, view, None), speakers(view))
        qvec = memory.embed_query(cues.query)
        cos = matrix @ qvec
        bm25 = view.lexical_scores(" ".join([cues.query, *cues.keywords]))
        bm25 = bm25 / (bm25.max() + 1e-9)
        alignment, _ = aligner(view, qvec, cues.query, cfg.alignment, context_weights(cfg))(list(view.ids))
        rho = cfg.alignment_weight * alignment + np.array([cue_bonus(u, cues, cfg) for u in units])
        top = np.argsort(-rho, kind="stable")
        centroid = matrix[top[:5]].mean(0)
        session = np.zeros((n, 3))
        for rows in sessions.values():
            best = np.sort(cos[rows])[::-1]
            session[rows] = best[0], best[:3].mean(), bm25[rows].max()
        has_time = float(cues.time is not None)
        columns = {
            "cos": cos, "cos_nb1": best_away(cos, neighbours, 1), "cos_nb2": best_away(cos, neighbours, 2),
            "cos_z": (cos - cos.mean()) / (cos.std() + 1e-9), "bm25": bm25,
            "bm25_nb1": best_away(bm25, neighbours, 1), "bm25_nb2": best_away(bm25, neighbours, 2),
            "bm25_any": (bm25 > 0).astype(float),
            "speaker_named": np.array([float(_speaker(u) in cues.participants) for u in units]),
            "mentions_named": np.array([float(any(p in u.restatement.lower() for p in cues.participants))
                                        for u in units]),
            "time_sim": np.array([time_similarity(cues.time, u.time) if cues.time and u.time else 0.0
                                  for u in units]),
            "query_has_time": np.full(n, has_time), "names_in_query": np.full(n, float(len(cues.participants))),
            "session_cos_max": session[:, 0], "session_cos_top3": session[:, 1], "session_bm25_max": session[:, 2],
            "semantic_nb_top10": adjacency["semantic"][:, top[:10]].sum(1),
            "structural_nb_top10": adjacency["structural"][:, top[:10]].sum(1),
            "cos_top10_max": (matrix @ matrix[top[:10]].T).max(1),
            "cos_top5_centroid": matrix @ (centroid / np.linalg.norm(centroid)),
            "log_rank_cos": _log_rank(cos), "log_rank_bm25": _log_rank(bm25), "log_rank_rho": _log_rank(rho),
            "log_words": words, "rho": rho,
        }
        features = np.stack([columns[name] for name in FEATURES], 1).astype(np.float64)
        labels = np.array([t in q.evidence for t in turns], dtype=np.float64)
        out.append((features, labels, {"conv": conv.id, "category": q.category_name,
                                       "evidence": sorted(q.evidence), "turns": turns}))
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 25) -> tuple[np.ndarray, ...]:
    """Standardised L2 logistic regression by Newton's method: ``(mean, scale, weights, bias)``."""
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return mean, scale, w[:-1], w[-1]


def coordinate_ascent(data: list, columns: list[int], start: np.ndarray, passes: int = 3) -> np.ndarray:
    """Weights that maximise mean ``recall_all@10 + recall_all@30`` on ``data`` itself.

    Greedy coordinate ascent over standardised features (RankLib's "Coordinate
    Ascent" in its simplest form), started from ``start``. Fitted in-sample, so on
    the data it was fitted to its score bounds what linear re-weighting can reach.
    """
    x = [f[:, columns] for f, _, _ in data]
    scale = np.vstack(x).std(0) + 1e-9
    x = [f / scale for f in x]
    wanted = [np.array([t in meta["evidence"] for t in meta["turns"]]) for _, _, meta in data]
    needed = [len(meta["evidence"]) for _, _, meta in data]
    turn_ids = [np.array([hash(t) for t in meta["turns"]]) for _, _, meta in data]

    def objective(w: np.ndarray) -> float:
        total = 0.0
        for f, is_ev, need, tids in zip(x, wanted, needed, turn_ids, strict=True):
            order = np.argsort(-(f @ w), kind="stable")[:30]
            for k in (10, 30):
                total += len(set(tids[order[:k]][is_ev[order[:k]]])) >= need
        return total / (2 * len(x))

    w = start * scale
    best = objective(w)
    for _ in range(passes):
        improved = False
        for j in range(len(w)):
            for delta in (-1.0, -0.3, -0.1, 0.1, 0.3, 1.0):
                trial = w.copy()
                trial[j] += delta * max(abs(w).max(), 1e-3)
                if (value := objective(trial)) > best + 1e-9:
                    w, best, improved = trial, value, True
        if not improved:
            break
    return w / scale


def recall_by_category(questions: list, scores: list[np.ndarray]) -> dict[str, dict[str, float]]:
    """``recall_all@k`` per category (and ``overall_1_4``) of each question's ranking."""
    hits: dict[str, dict[int, list[bool]]] = {}
    for (_, _, meta), score in zip(questions, scores, strict=True):
        ranked = [meta["turns"][i] for i in np.argsort(-score, kind="stable")]
        for k in KS:
            covered = set(ranked[:k])
            found = recall_all(meta["evidence"], covered) == 1.0
            for cat in (meta["category"], "overall_1_4") if meta["category"] in CATEGORIES else (meta["category"],):
                hits.setdefault(cat, {}).setdefault(k, []).append(found)
    return {cat: {f"recall_all@{k}": round(float(np.mean(v)), 4) for k, v in by_k.items()}
            for cat, by_k in hits.items()}


def evaluate(data: dict[str, list], tune: list[str], held: list[str], columns: list[int]) -> dict:
    """Leave-one-conversation-out on ``tune``; fit on all of ``tune`` for ``held``."""
    def stack(convs: list[str]) -> tuple[np.ndarray, np.ndarray]:
        rows = [q for c in convs for q in data[c]]
        return np.vstack([f[:, columns] for f, _, _ in rows]), np.concatenate([y for _, y, _ in rows])

    def scores(model: tuple, convs: list[str]) -> tuple[list, list[np.ndarray]]:
        mean, scale, w, b = model
        rows = [q for c in convs for q in data[c]]
        return rows, [((f[:, columns] - mean) / scale) @ w + b for f, _, _ in rows]

    loco_rows, loco_scores = [], []
    for conv in tune:
        rows, s = scores(fit_logistic(*stack([c for c in tune if c != conv])), [conv])
        loco_rows += rows
        loco_scores += s
    model = fit_logistic(*stack(tune))
    rows = [q for c in tune for q in data[c]]
    ascent = coordinate_ascent(rows, columns, model[2] / model[1])
    held_rows = [q for c in held for q in data[c]]
    return {"tune_leave_one_out": recall_by_category(loco_rows, loco_scores),
            "heldout": recall_by_category(*scores(model, held)),
            "ascent_tune_in_sample": recall_by_category(rows, [f[:, columns] @ ascent for f, _, _ in rows]),
            "ascent_heldout": recall_by_category(held_rows, [f[:, columns] @ ascent for f, _, _ in held_rows]),
            "weights": {FEATURES[c]: round(float(w / s), 4) for c, w, s in zip(columns, model[2], model[1],
                                                                                 strict=True)}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--cache", default="/tmp/ripplemem-embedding-cache.npz")
    parser.add_argument("--out", default=None, help="results JSON")
    parser.add_argument("--md", default=None, help="markdown table for docs/")
    args = parser.parse_args()
    embeddings = CachedEmbeddings(Path(args.cache))
    data: dict[str, list] = {}
    try:
        for conv in load_locomo(args.path):
            memory = RippleMemory(embeddings, write_config=WriteConfig(), recall_config=RecallConfig())
            memory.add_conversation(conv.conversation, namespace=(conv.id,))
            data[conv.id] = conversation_features(memory, conv)
    finally:
        embeddings.save()
    tune = [c for c in data if c in LOCOMO_TUNE]
    held = [c for c in data if c not in LOCOMO_TUNE]
    every = list(range(len(FEATURES)))
    rho_only = [FEATURES.index("rho")]
    results = {
        "what": "turn-level recall_all@k, categories 1-4, every unit of the conversation ranked",
        "features": GROUPS,
        "rho_whole_namespace": {
            "tune": recall_by_category([q for c in tune for q in data[c]],
                                       [f[:, rho_only[0]] for c in tune for f, _, _ in data[c]]),
            "heldout": recall_by_category([q for c in held for q in data[c]],
                                          [f[:, rho_only[0]] for c in held for f, _, _ in data[c]]),
        },
        "learned_all_features": evaluate(data, tune, held, every),
        "learned_without_graph": evaluate(data, tune, held,
                                          [i for i in every if FEATURES[i] not in GROUPS["graph"]]),
    }
    print(table(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    if args.md:
        Path(args.md).write_text(f"<!-- generated by scripts/ranker_ceiling.py from {args.out or 'a run'} -->\n\n"
                                 + table(results) + "\n")


ROWS = [  # (label, result key, tuning-split key, held-out key)
    ("rho (recommended RecallConfig()) over every unit", "rho_whole_namespace", "tune", "heldout"),
    ("logistic regression, all 25 features", "learned_all_features", "tune_leave_one_out", "heldout"),
    ("logistic regression, no graph features", "learned_without_graph", "tune_leave_one_out", "heldout"),
    ("coordinate ascent, all features (tune in-sample)", "learned_all_features",
     "ascent_tune_in_sample", "ascent_heldout"),
    ("coordinate ascent, no graph features (tune in-sample)", "learned_without_graph",
     "ascent_tune_in_sample", "ascent_heldout"),
]


def table(results: dict) -> str:
    """Markdown: overall @5/@10/@30 and multi-hop @30, tuning split and held-out."""
    head = "| ranker | tune @5 | tune @10 | tune @30 | tune multi-hop @30 | held-out @10 | held-out @30 " \
           "| held-out multi-hop @30 |\n|---|---|---|---|---|---|---|---|"
    lines = [head]
    for label, key, tune_split, held_split in ROWS:
        tune, held = results[key][tune_split], results[key][held_split]
        cells = [tune["overall_1_4"][f"recall_all@{k}"] for k in KS] + [tune["multi-hop"]["recall_all@30"]]
        cells += [held["overall_1_4"]["recall_all@10"], held["overall_1_4"]["recall_all@30"],
                  held["multi-hop"]["recall_all@30"]]
        lines.append(f"| {label} | " + " | ".join(f"{100 * c:.1f}" for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
