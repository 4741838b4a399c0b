"""
The peer a user would otherwise run: agent-RL steps of TRL's GRPOTrainer with `tools=` on this project's
model, RL prompts and tools, timed step by step. Compare with this trainer's own step at the same shape
(`scripts/bench_agent_rl.py`, "RL step at 16x8").

TRL is not a dependency of the project; the peer has its own requirements:
    python -m venv .venv-peer && . .venv-peer/bin/activate && pip install -r requirements-peer.txt
    python scripts/bench_trl_grpo.py --shape 16x8 --steps 2 --out trl_grpo.json

What is the same: the model and its weights (out/full_sft_256.pth, exported as a Qwen3 directory, which
transformers runs with its own Qwen3 code), the chat template, the RL prompts
(dataset/agent_rl.jsonl, the same pick as bench_agent_rl.py), the tools' code (train_agent.execute_tool),
16 prompts x 8 samples a step, temperature 0.8, up to 2 rounds of tool calls,
KL to a frozen reference (beta 0.1), CISPO, one optimizer step per rollout, fp32 on CPU. What differs,
because GRPOTrainer takes one tool list for every prompt: each prompt offers all six tools (their
descriptions from the functions' docstrings) instead of its own subset, so prompts are longer; the reward
here is only "a ground-truth string is in the answer" (TRL's reward functions see the completion's
messages), every group is trained (no cut to informative groups), and TRL's token budget covers a whole
trajectory (768 here: three turns of 256) where this trainer's is 256 new tokens a turn.
"""
import argparse
import json
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import trl
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_template
except ImportError as e:  # the project's own environment does not have TRL
    raise SystemExit(f"this peer needs TRL ({e}): pip install -r requirements-peer.txt") from None
import torch
from datasets import Dataset
from transformers import TrainerCallback

from dataset.lm_dataset import AgentRLDataset
from scripts.bench_agent_rl import pick_prompts
from trainer.outcome import gt_in_text
from trainer.train_agent import MOCK_RESULTS, execute_tool
from model.model_minimind import save_qwen3_dir
from trainer.trainer_utils import add_model_args, init_model


def _run(name: str, **args) -> str:
    return json.dumps(execute_tool(name, args), ensure_ascii=False)


# The six tools as GRPOTrainer wants them: functions whose docstrings give the JSON schema
def calculate_math(expression: str) -> str:
    """计算数学表达式

    Args:
        expression: the expression
    """
    return _run("calculate_math", expression=expression)


def unit_converter(value: float, from_unit: str, to_unit: str) -> str:
    """单位换算,支持 km、miles、kg、pounds、meters、feet、celsius、fahrenheit

    Args:
        value: the value
        from_unit: the unit of the value
        to_unit: the unit wanted
    """
    return _run("unit_converter", value=value, from_unit=from_unit, to_unit=to_unit)


def get_current_weather(location: str) -> str:
    """查询城市的当前天气

    Args:
        location: the city
    """
    return _run("get_current_weather", location=location)


def get_current_time(timezone: str = "Asia/Shanghai") -> str:
    """查询时区的当前时间,默认 Asia/Shanghai

    Args:
        timezone: the timezone
    """
    return _run("get_current_time", timezone=timezone)


def get_exchange_rate(from_currency: str, to_currency: str) -> str:
    """查询货币汇率,货币用代码表示,如 USD、CNY

    Args:
        from_currency: the currency to convert from
        to_currency: the currency to convert to
    """
    return _run("get_exchange_rate", from_currency=from_currency, to_currency=to_currency)


def translate_text(text: str, target_language: str) -> str:
    """把文本翻译成 english 或 chinese

    Args:
        text: the text
        target_language: english or chinese
    """
    return _run("translate_text", text=text, target_language=target_language)


PEER_TOOLS = [calculate_math, unit_converter, get_current_weather, get_current_time, get_exchange_rate,
              translate_text]


def answer_has_gt(completions, gt, **kwargs):
    """1 when one of the prompt's ground-truth strings is in the last assistant message, else 0."""
    rewards = []
    for messages, wanted in zip(completions, gt):
        answers = [m.get("content") or "" for m in messages if m.get("role") == "assistant"]
        text = answers[-1] if answers else ""
        rewards.append(float(any(gt_in_text(g, text) for g in wanted)) if wanted else 0.0)
    return rewards


class StepTimer(TrainerCallback):
    """Wall time of every optimizer step (generation, tools, reference and policy passes, optimizer)."""

    def __init__(self):
        self.start, self.seconds = None, []

    def on_step_begin(self, args, state, control, **kwargs):
        if self.start is None:
            self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        now = time.perf_counter()
        self.seconds.append(now - self.start)
        self.start = now


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Time agent-RL steps of TRL's GRPOTrainer with tools=")
    parser.add_argument("--weight", default="full_sft")
    parser.add_argument("--save_dir", default="out")
    add_model_args(parser)
    parser.add_argument("--data_path", default="dataset/agent_rl.jsonl")
    parser.add_argument("--shape", default="16x8", help="prompts x samples per step")
    parser.add_argument("--steps", type=int, default=2, help="optimizer steps; the first one warms up")
    parser.add_argument("--max_completion_length", type=int, default=768,
                        help="TRL's budget for a whole trajectory (the model's turns and the tool results); "
                             "this trainer's is 256 new tokens a turn, 3 turns")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=None)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    prompts, samples = (int(n) for n in args.shape.lower().split("x"))
    torch.manual_seed(args.seed)
    model, tok = init_model(args, args.weight, args.save_dir, "cpu")
    tok.response_template = qwen3_template  # our assistant turns write tool calls in Qwen3's format
    dataset = AgentRLDataset(args.data_path, known_tools=set(MOCK_RESULTS))
    items = [item for step in range(args.steps) for item in pick_prompts(dataset, prompts, args.seed + step)]
    # GRPOTrainer renders every prompt with its own tool list: the per-prompt lists in the system turns go
    rows = [{"prompt": [{k: v for k, v in m.items() if k != "tools"} for m in it["messages"]],
             "gt": list(it["gt"] or [])} for it in items]
    config = GRPOConfig(
        output_dir=os.path.join(args.save_dir, "trl_grpo_bench"), use_cpu=True, bf16=False, fp16=False,
        per_device_train_batch_size=prompts * samples // 8, gradient_accumulation_steps=8,
        num_generations=samples, max_completion_length=args.max_completion_length, max_tool_calling_iterations=2,
        temperature=0.8, top_p=1.0, learning_rate=5e-5, beta=0.1, loss_type="cispo", max_steps=args.steps,
        shuffle_dataset=False, logging_steps=1, report_to="none", save_strategy="no", seed=args.seed,
        dataloader_num_workers=0)
    timer = StepTimer()
    # GRPOTrainer loads the policy and its reference from a directory: the model as a Qwen3 one (fp32, the
    # same weights; transformers runs it with its own Qwen3 code)
    model_dir = os.path.join(config.output_dir, "policy")
    save_qwen3_dir(model, model_dir, "float32")
    trainer = GRPOTrainer(model=model_dir, reward_funcs=answer_has_gt, args=config,
                          train_dataset=Dataset.from_list(rows), processing_class=tok, tools=PEER_TOOLS,
                          callbacks=[timer])
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    result = {"trl": trl.__version__, "torch": torch.__version__, "threads": torch.get_num_threads(),
              "shape": args.shape, "step_seconds": timer.seconds, "logs": logs}
    print(f"TRL {trl.__version__} GRPOTrainer, {args.shape}, tools=: step seconds "
          + ", ".join(f"{s:.1f}" for s in timer.seconds) + " (the first warms up)")
    for h in logs:
        print({k: h[k] for k in h if any(w in k for w in ("reward", "tool", "completions/mean_length", "loss"))})
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
