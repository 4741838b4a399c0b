"""The metrics plot: every panel drawn from a metrics file, and a bad line named."""
import json

import pytest

from scripts.plot_metrics import main, read_metrics


def test_plot_writes_a_png_and_names_bad_lines(tmp_path):
    path = tmp_path / "agent_64_metrics.jsonl"
    rows = [{"step": 0, "eval_task_completion": 0.5}]
    rows += [{"step": s, "reward": 1.0 + s / 10, "r_gt_match": 2.5, "r_repeat_call": -1.0 * (s % 2),
              "tool_success": 0.9, "tool_calls": 1.2, "expected_calls": 1.0, "repeat_calls": 0.0,
              "unfinished": 0.0, "parse_errors": 0.0, "resp_len": 50, "kl": 0.001 * s, "group_std": 0.5,
              "zero_std_groups": 0.5} for s in range(1, 30)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    main([str(path)])
    png = tmp_path / "agent_64_metrics.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20000
    path.write_text(json.dumps(rows[1]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}:2"):
        read_metrics(str(path))
