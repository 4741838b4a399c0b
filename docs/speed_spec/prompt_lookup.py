"""Would speculative decoding with drafts looked up in the context pay on this engine? Two measurements:

    python docs/speed_spec/prompt_lookup.py steps   # decoding steps saved, from real 16 x 8 rollouts
    python docs/speed_spec/prompt_lookup.py cost    # a decoding forward's time at 1 to 9 tokens a row

`steps` rolls out 4 rounds of 16 RL prompts x 8 with the shipped SFT checkpoint (the benchmark's settings),
keeps every engine call's prompts and completions, and replays each row: at every step a draft of up to k
tokens is looked up (the tokens after the latest earlier occurrence of the last n tokens, n = 3 down to
n_min, in the row's prompt and its completion so far; with `table`, also in the completions of earlier calls),
and the step accepts the draft's longest prefix that equals what the row actually sampled, plus one token.
Speculative sampling accepts a deterministic draft token x with probability p(x), the same probability with
which the row samples x, so the count is an estimate of the expected steps. A turn takes as many steps as its
slowest row. `cost` times the model's forward on a two-level cache of 16 prompts (4 or 8 rows each, after 30
own positions) with T new tokens a row and T logits kept, 12 times each, alone.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402

from dataset.lm_dataset import AgentRLDataset  # noqa: E402
from scripts import bench_agent_rl as bench  # noqa: E402
from trainer.rollout_engine import RolloutEngine, create_rollout_engine  # noqa: E402
from trainer.train_agent import MOCK_RESULTS, rollout_batch, start_trajectory  # noqa: E402
from trainer.trainer_utils import autocast, init_model  # noqa: E402


class Recorder(RolloutEngine):
    def __init__(self, engine):
        self.engine, self.calls = engine, []

    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        out = self.engine.rollout(prompt_ids, max_new_tokens, temperature, top_p, max_length)
        self.calls.append((prompt_ids, out.completion_ids))
        return out

    def update_policy(self, model):
        self.engine.update_policy(model)


def context_draft(ctx, k, n_min, n_max=3):
    for n in range(n_max, n_min - 1, -1):
        if len(ctx) < n + 1:
            continue
        pattern = ctx[-n:]
        for s in range(len(ctx) - n - 1, -1, -1):
            if ctx[s:s + n] == pattern:
                return ctx[s + n:s + n + k]
    return []


def replay(calls, k, n_min, table_n=0):
    """(steps the turns take, row-steps) without and with drafts."""
    totals = [0, 0, 0, 0]
    for index, (prompts, completions) in enumerate(calls):
        table = {}
        if table_n:
            for _, earlier in calls[:index]:
                for c in earlier:
                    for s in range(len(c) - table_n):
                        table[tuple(c[s:s + table_n])] = (s, c)
        per_row = []
        for prompt, c in zip(prompts, completions):
            ctx, pos, steps = list(prompt) + [c[0]], 1, 0  # the first token comes from the prefill
            while pos < len(c):
                draft = context_draft(ctx, k, max(n_min, 2) if table_n else n_min)
                if not draft and table_n:
                    hit = table.get(tuple(ctx[-table_n:]))
                    draft = hit[1][hit[0] + table_n:hit[0] + table_n + k] if hit else context_draft(ctx, k, 1, 1)
                accepted = 0
                while accepted < len(draft) and pos + accepted < len(c) and draft[accepted] == c[pos + accepted]:
                    accepted += 1
                n = min(accepted + 1, len(c) - pos)
                ctx.extend(c[pos:pos + n])
                pos += n
                steps += 1
            per_row.append(steps)
            totals[2] += len(c) - 1
            totals[3] += steps
        totals[0] += max(len(c) for c in completions) - 1
        totals[1] += max(per_row)
    return totals


def main(mode):
    args = bench.parse_args(["--shapes", "16x8"])
    targs = bench.trainer_args(args, 16, 8)
    model, tok = init_model(targs, targs.from_weight, targs.save_dir, args.device)
    dataset = AgentRLDataset(args.data_path, known_tools=set(MOCK_RESULTS))
    engine = create_rollout_engine("torch", model, tok.eos_token_id, tok.pad_token_id, targs.device, targs.dtype)
    if mode == "steps":
        recorder = Recorder(engine)
        for r in range(4):
            items = bench.pick_prompts(dataset, 16, args.seed + r)
            torch.manual_seed(args.seed + r)
            rollout_batch(recorder, tok, [it["messages"] for it in items], [it["tools"] for it in items], 8, targs)
        tokens = sum(len(c) for _, cs in recorder.calls for c in cs)
        print(f"{len(recorder.calls)} engine calls, {tokens} model-written tokens")
        for table_n in (0, 3):
            for k in (2, 4, 8):
                for n_min in ((1, 2) if not table_n else (2,)):
                    a, b, c, d = replay(recorder.calls, k, n_min, table_n)
                    source = f"context and earlier calls (n={table_n})" if table_n else f"context, n >= {n_min}"
                    print(f"k={k} {source}: turn steps {a} -> {b} ({a / b:.2f}x fewer), "
                          f"row-steps {c} -> {d} ({c / d:.2f}x)")
        return
    items = bench.pick_prompts(dataset, 16, args.seed)
    prompts = [start_trajectory(tok, it["messages"], it["tools"], False).prompt_ids for it in items]
    model.eval()
    for per_prompt in (4, 8):
        rows = [p for p in prompts for _ in range(per_prompt)]
        for T in (1, 2, 3, 5, 9):
            with torch.no_grad(), autocast(args.device, targs.dtype), engine.packed_weights():
                _, mask, cache = engine.prefill(rows, 400)
                times = []
                for step in range(42):
                    new = 1 if step < 30 else T
                    mask = torch.cat([mask, torch.ones(len(rows), new, dtype=torch.long)], 1)
                    t0 = time.perf_counter()
                    model(torch.full((len(rows), new), 100), attention_mask=mask,
                          position_ids=cache.positions(mask, new), cache=cache, use_cache=True, logits_to_keep=new)
                    if step >= 30:
                        times.append(time.perf_counter() - t0)
            times.sort()
            print(f"{len(rows)} rows, {T} tokens a row: median {1e3 * times[len(times) // 2]:.2f} ms, "
                  f"best {1e3 * times[0]:.2f} ms")


if __name__ == "__main__":
    if sys.argv[1:] not in (["steps"], ["cost"]):
        sys.exit(__doc__)
    main(sys.argv[1])
