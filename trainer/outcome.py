"""
Reading what a trajectory came to: the final answer the user sees, whether it quotes the ground truth, which
calls failed or repeated. The reward (trainer/train_agent.py) and the evaluation (trainer/evaluation.py) read
outcomes with these same functions, so a case the evaluation counts as solved is one the reward paid for.
"""
import json
import re

NUMBER_RE = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


def final_answer(turns) -> str:
    """The answer the user sees: the last model turn, after its last </tool_call> and its think block."""
    text = turns[-1] if turns else ""
    text = text.rsplit("</tool_call>", 1)[-1]
    text = text.rsplit("</think>", 1)[-1]
    return text.strip()


def _as_number(text: str):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def gt_in_text(gt: str, text: str) -> bool:
    """Numeric GT: equal (within 1e-6) to one of the numbers written in the text, so "9" does not match
    "59" or "9.5". Text GT: case-insensitive substring."""
    value = _as_number(gt.strip())
    if value is not None:
        return any(abs(_as_number(n) - value) < 1e-6 for n in NUMBER_RE.findall(text))
    return gt.strip().lower() in text.lower()


def validate_gt_in_text(text: str, gt_list) -> set:
    """Indices of the GT values found in the text."""
    return {i for i, gt in enumerate(gt_list) if gt_in_text(gt, text)}


def call_key(call) -> tuple:
    return call["name"], json.dumps(call["arguments"], sort_keys=True, ensure_ascii=False)


def count_repeated_calls(calls) -> int:
    """Calls that repeat an earlier call of the same trajectory exactly (name and arguments)."""
    seen, repeats = set(), 0
    for call in calls:
        key = call_key(call)
        repeats += key in seen
        seen.add(key)
    return repeats


def tool_result_ok(result) -> bool:
    return isinstance(result, dict) and "error" not in result


def task_solved(answer: str, gt, called: bool, unfinished: bool, needs_no_tool: bool) -> bool:
    """What the evaluation counts as a completed task: every GT value in the final answer, the trajectory
    finished, and no call on a question that needs none."""
    if (needs_no_tool and called) or unfinished:
        return False
    return len(validate_gt_in_text(answer, gt)) == len(gt)
