"""Evaluation metrics on hand-made results, the cases file format, and data files with bad lines."""
import json

import pytest

from dataset.lm_dataset import AgentRLDataset, DataError
from scripts.eval_toolcall import load_cases
from trainer.evaluation import CaseResult, by_category, by_tool, summarize

OK_WEATHER = {"city": "北京", "temperature": "28°C", "condition": "晴"}


def weather_call(city="北京", result=OK_WEATHER):
    return {"name": "get_current_weather", "arguments": {"location": city}, "result": result, "valid": True}


def test_metrics_on_known_results():
    results = [
        # right tool, right answer
        CaseResult("q1", "single", ["28°C", "晴"], ["get_current_weather"], [weather_call()], ["...", "28°C,晴"],
                   "28°C,晴"),
        # the same call twice (a repeat), answer misses one GT
        CaseResult("q2", "single", ["28°C", "晴"], ["get_current_weather"], [weather_call(), weather_call()],
                   ["...", "...", "28°C"], "28°C"),
        # a tool called on a no-tool question
        CaseResult("q3", "no_tool", [], [], [weather_call("火星", {"error": "unknown location: 火星"})],
                   ["...", "不知道"], "不知道"),
        # a no-tool question answered directly
        CaseResult("q4", "no_tool", [], [], [], ["你好!"], "你好!"),
        # an invalid call, then unfinished
        CaseResult("q5", "single", ["9472"], ["calculate_math"],
                   [{"name": "calculate_math", "arguments": {"expr": "1"}, "result": {"error": "invalid"},
                     "valid": False}],
                   ["...", "..."], "", unfinished=True),
    ]
    s = summarize(results)
    assert s["task_completion"] == pytest.approx(2 / 5)  # q1, q4
    assert s["tool_call_rate"] == 1.0  # every case that needs a tool called one
    assert s["tool_selection_accuracy"] == pytest.approx(3 / 5)  # q1, q4, q5 (called calculate_math)
    assert s["arg_validity"] == pytest.approx(4 / 5)  # the calculate_math call lacks "expression"
    assert s["tool_success_rate"] == pytest.approx(3 / 5)
    assert s["repeat_call_rate"] == pytest.approx(1 / 5)
    assert s["no_tool_accuracy"] == 0.5
    assert s["avg_turns"] == pytest.approx(10 / 5)
    assert s["avg_tool_calls"] == 1.0 and s["expected_tool_calls"] == pytest.approx(3 / 5)
    assert s["unfinished_rate"] == pytest.approx(1 / 5)
    cats = by_category(results)
    assert cats["no_tool"]["task_completion"] == 0.5 and cats["single"]["cases"] == 3
    tools = by_tool(results)
    assert tools["get_current_weather"]["calls"] == 4 and tools["get_current_weather"]["task_completion"] == 0.5
    assert tools["calculate_math"]["arg_validity"] == 0.0


def write(tmp_path, lines, name="f.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_cases_file_errors_name_file_line_and_field(tmp_path):
    good = json.dumps({"prompt": "hi", "tools": ["calculate_math"], "gt": ["1"]})
    assert load_cases(write(tmp_path, [good]))[0]["expect_tools"] is None
    bad = {
        "not json": "invalid JSON",
        json.dumps({"tools": []}): "'prompt'",
        json.dumps({"prompt": "x", "tools": ["search_web"]}): "unknown tool names",
        json.dumps({"prompt": "x", "gt": "9472"}): "'gt'",
        json.dumps({"prompt": "x", "expect_tools": "calculate_math"}): "'expect_tools'",
    }
    for line, needle in bad.items():
        path = write(tmp_path, [good, line])
        with pytest.raises(ValueError) as err:
            load_cases(path)
        assert f"{path}:2" in str(err.value) and needle in str(err.value)


def test_rl_dataset_errors_and_skipping(tmp_path):
    system = {"role": "system", "content": "s", "tools": json.dumps([{"type": "function",
                                                                       "function": {"name": "calculate_math"}}])}
    good = {"conversations": [system, {"role": "user", "content": "1+1"}, {"role": "assistant", "content": "2"}],
            "gt": ["2"]}
    item = AgentRLDataset(write(tmp_path, [json.dumps(good)]))[0]
    assert [m["role"] for m in item["messages"]] == ["system", "user"]  # the reference answer is dropped
    assert item["tools"][0]["function"]["name"] == "calculate_math" and item["gt"] == ["2"]
    no_gt = dict(good)
    del no_gt["gt"]
    bad_tools = json.loads(json.dumps(good))
    bad_tools["conversations"][0]["tools"] = 42
    unknown = json.loads(json.dumps(good))
    unknown["conversations"][0]["tools"] = [{"type": "function", "function": {"name": "rm_rf"}}]
    cases = {"{oops": "invalid JSON", json.dumps(no_gt): "'gt'", json.dumps(bad_tools): "tools",
             json.dumps({"conversations": []}): "'conversations'", json.dumps(unknown): "unknown tool"}
    for line, needle in cases.items():
        path = write(tmp_path, [json.dumps(good), line])
        with pytest.raises(DataError) as err:
            AgentRLDataset(path, known_tools={"calculate_math"})
        assert f"{path}:2" in str(err.value) and needle in str(err.value)
    path = write(tmp_path, [json.dumps(good)] + list(cases))
    ds = AgentRLDataset(path, known_tools={"calculate_math"}, skip_bad_lines=True)
    assert len(ds) == 1 and ds.stats["skipped"] == len(cases)


def write_report(path, outcomes, prompts=None):
    """A minimal eval_toolcall.py --out report: one case per (category, completed)."""
    cases = [{"prompt": (prompts or [f"q{i}" for i in range(len(outcomes))])[i], "category": cat,
              "completed": done, "calls": []} for i, (cat, done) in enumerate(outcomes)]
    path.write_text(json.dumps({"summary": {}, "cases": cases}))
    return str(path)


def test_compare_evals_counts_flips_and_fragile_losses(tmp_path):
    from scripts import compare_evals
    before = write_report(tmp_path / "a.json", [("single", True), ("single", True), ("chained", False),
                                                ("chained", True)])
    after = write_report(tmp_path / "b.json", [("single", False), ("single", True), ("chained", True),
                                               ("chained", False)])
    # samples of `before`: case 0 solved 1 of 2 times (fragile), case 1 and 3 both times (solid)
    s1 = write_report(tmp_path / "s1.json", [("single", True), ("single", True), ("chained", False),
                                             ("chained", True)])
    s2 = write_report(tmp_path / "s2.json", [("single", False), ("single", True), ("chained", True),
                                             ("chained", True)])
    cmp = compare_evals.main([before, after, "--samples", s1, s2])
    assert cmp.by_category == {"chained": (2, 1, 1), "single": (2, 2, 1)}
    assert [(f.index, f.won, f.sample_passes) for f in cmp.flips] == [(0, False, 1), (2, True, 1), (3, False, 2)]
    assert (cmp.fragile, cmp.solid) == (1, 2)
    other = write_report(tmp_path / "c.json", [("single", True)] * 4, prompts=["q0", "q1", "other", "q3"])
    with pytest.raises(ValueError, match="case 2 is 'other'"):
        compare_evals.main([before, other])


def test_compare_sampled_pairs_the_per_case_means(tmp_path):
    from scripts import compare_sampled
    cats = ["single", "single", "no_tool", "no_tool"]
    runs = {"b1": [1, 0, 0, 0], "b2": [1, 1, 0, 0], "a1": [1, 1, 1, 0], "a2": [1, 1, 1, 1]}
    paths = {k: write_report(tmp_path / f"{k}.json", list(zip(cats, map(bool, v)))) for k, v in runs.items()}
    rows = compare_sampled.main(["--before", paths["b1"], paths["b2"], "--after", paths["a1"], paths["a2"]])
    by = {r["group"]: r for r in rows}
    # per-case means: before 1, .5, 0, 0; after 1, 1, 1, .5; differences 0, .5, 1, .5
    assert by["all"]["diff"] == pytest.approx(0.5) and by["all"]["before"] == pytest.approx(0.375)
    assert by["category:no_tool"]["diff"] == pytest.approx(0.75)
    half = 1.96 * (sum((d - 0.5) ** 2 for d in (0, 0.5, 1, 0.5)) / 3 / 4) ** 0.5
    assert by["all"]["low"] == pytest.approx(0.5 - half) and by["all"]["high"] == pytest.approx(0.5 + half)
    other = write_report(tmp_path / "o.json", list(zip(cats, [True] * 4)), prompts=["q0", "x", "q2", "q3"])
    with pytest.raises(ValueError, match="case 1 is 'x'"):
        compare_sampled.main(["--before", paths["b1"], other, "--after", paths["a1"]])


def test_pass_at_k_estimate_and_table(tmp_path):
    from scripts.pass_at_k import main, pass_at_k
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25) and pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(4, 0, 4) == 0.0 and pass_at_k(4, 4, 1) == 1.0 and pass_at_k(4, 2, 4) == 1.0
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(4, 1, 5)
    # case 0 solved by 2 of 4 samples, case 1 by none, case 2 by all four
    outcomes = [[True, False, True], [True, False, True], [False, False, True], [False, False, True]]
    samples = [write_report(tmp_path / f"s{j}.json", [("single", o[0]), ("single", o[1]), ("no_tool", o[2])])
               for j, o in enumerate(outcomes)]
    greedy = write_report(tmp_path / "g.json", [("single", False), ("single", False), ("no_tool", True)])
    rows = {r.category: r for r in main(samples + ["--greedy", greedy])}
    assert list(rows["all"].pass_k) == [1, 2, 4]
    assert rows["single"].pass_k[1] == pytest.approx(0.5) and rows["single"].pass_k[2] == pytest.approx(5 / 6)
    assert rows["single"].pass_k[4] == pytest.approx(1.0) and rows["single"].never == 1
    assert rows["all"].pass_k[4] == pytest.approx(2.0) and (rows["all"].greedy, rows["all"].cases) == (1, 3)
    other = write_report(tmp_path / "o.json", [("single", True)] * 2)
    with pytest.raises(ValueError, match="2 cases"):
        main(samples + [other])


def rl_row(user, gt, tools=("calculate_math",), category="single", expect=("calculate_math",)):
    schemas = [{"type": "function", "function": {"name": n}} for n in tools]
    return json.dumps({"conversations": [{"role": "system", "content": "s", "tools": json.dumps(schemas)},
                                         {"role": "user", "content": user},
                                         {"role": "assistant", "content": gt[0] if gt else "ok"}],
                       "gt": gt, "category": category, "expect_tools": list(expect)}, ensure_ascii=False)


def test_rl_prompt_rows_as_cases_and_the_seen_unseen_split(tmp_path):
    from scripts.eval_toolcall import split_by_training, trained_prompts
    rows = [rl_row("1+1", ["2"]), rl_row("hi", [], tools=(), category="no_tool", expect=()),
            rl_row("2*3", ["6"]), rl_row("3*3", ["9"])]
    pool = write(tmp_path, rows, name="pool.jsonl")
    cases = load_cases(pool)
    assert cases[0] == {"prompt": "1+1", "tools": ["calculate_math"], "gt": ["2"],
                        "expect_tools": ["calculate_math"], "category": "single", "skill": "single",
                        "expect_calls": []}
    assert cases[1]["tools"] == [] and cases[1]["expect_tools"] == []
    # the shipped pool reads as cases, one per row
    shipped = load_cases("dataset/agent_rl.jsonl")
    assert len(shipped) == len(AgentRLDataset("dataset/agent_rl.jsonl"))
    two_users = json.loads(rows[0])
    two_users["conversations"][2:2] = [{"role": "assistant", "content": "?"}, {"role": "user", "content": "again"}]
    with pytest.raises(DataError, match=r":2: field 'conversations': .*2 user turns"):
        load_cases(write(tmp_path, [rows[0], json.dumps(two_users)]))

    metrics = tmp_path / "m.jsonl"
    metrics.write_text("\n".join(json.dumps(r) for r in [{"step": 0, "eval_task_completion": 0.5},
                                                          {"step": 1, "prompts": [2, 0]},
                                                          {"step": 2, "prompts": [2]}]))
    seen = trained_prompts(str(metrics))
    assert seen == {0, 2}
    assert [c["prompt"] for c in split_by_training(cases, seen, "seen", pool, metrics)] == ["1+1", "2*3"]
    assert [c["prompt"] for c in split_by_training(cases, seen, "unseen", pool, metrics)] == ["hi", "3*3"]
    with pytest.raises(ValueError, match="index 7, but .* has 4 cases"):
        split_by_training(cases, {7}, "seen", pool, metrics)
    with pytest.raises(ValueError, match="no unseen prompts: .* trained on 4 of the 4 prompts"):
        split_by_training(cases, {0, 1, 2, 3}, "unseen", pool, metrics)
    with pytest.raises(ValueError, match="index -1"):
        split_by_training(cases, {-1, 0}, "unseen", pool, metrics)
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"step": 1, "reward": 1.0}) + "\n")
    with pytest.raises(ValueError, match="no record has a 'prompts' field"):
        trained_prompts(str(old))
