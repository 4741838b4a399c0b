"""The tool world: every mock fact, explicit errors, a calculator that cannot be escaped or hung, the parser."""
import json
import os
import time

import pytest

from trainer.tool_runner import MAX_TOOL_OUTPUT_CHARS
from trainer.train_agent import (
    CHECK_ARGS, MOCK_RESULTS, TOOL_RUNNER, TOOLS, count_parse_errors, execute_tool,
    parse_tool_calls,
)

WEATHER = {
    "北京": ("28°C", "晴"), "上海": ("15°C", "多云"), "广州": ("32°C", "闷热"), "深圳": ("30°C", "晴"),
    "杭州": ("22°C", "阴"), "成都": ("18°C", "小雨"), "武汉": ("25°C", "多云"), "南京": ("20°C", "晴"),
    "西安": ("16°C", "大风"), "重庆": ("26°C", "阴"), "Tokyo": ("12°C", "晴"), "New York": ("8°C", "多云"),
    "London": ("5°C", "小雨"), "Paris": ("10°C", "阴"), "Sydney": ("25°C", "晴朗"),
}
TIMES = {
    "Asia/Shanghai": "14:30:00", "America/New_York": "01:30:00", "Europe/London": "06:30:00",
    "Asia/Tokyo": "15:30:00", "Europe/Paris": "07:30:00", "Australia/Sydney": "17:30:00",
}
RATES = {
    ("USD", "CNY"): 7.21, ("EUR", "CNY"): 7.85, ("GBP", "CNY"): 9.12, ("JPY", "CNY"): 0.048,
    ("USD", "EUR"): 0.92, ("USD", "GBP"): 0.79, ("CNY", "JPY"): 20.83, ("AUD", "CNY"): 4.72,
}
UNITS = [
    (100, "km", "miles", 62.1371), (10, "miles", "km", 16.0934), (10, "kg", "pounds", 22.0462),
    (10, "pounds", "kg", 4.5359), (10, "meters", "feet", 32.8084), (10, "feet", "meters", 3.048),
    (100, "celsius", "fahrenheit", 212.0), (28, "celsius", "fahrenheit", 82.4), (212, "fahrenheit", "celsius", 100.0),
]
TRANSLATIONS = [
    ("你好世界", "english", "Hello World"), ("Good morning", "chinese", "早上好"),
    ("今天天气真好", "english", "The weather is nice today"), ("I love programming", "chinese", "我喜欢编程"),
    ("机器学习很有趣", "english", "Machine learning is interesting"), ("Happy birthday", "chinese", "生日快乐"),
]
PWNED = "/tmp/minimind_calculator_side_effect"
HOSTILE = {  # name -> expression; each must come back as an error, fast, with no side effect
    "import": "__import__('os')",
    "import and run a shell": f"__import__('os').system('touch {PWNED}')",
    "attribute walk": "().__class__.__bases__",
    "walk to __subclasses__": "().__class__.__bases__[0].__subclasses__()",
    "lambda": "(lambda: 1)()",
    "comprehension": "[x for x in range(10**9)]",
    "tower 9**9**9**9": "9**9**9**9",
    "tower 10**10**10": "10**10**10",
    "string times 10**9": "'a'*10**9",
    "100,000 characters": "1" * 100000,
    "10,000 nested parentheses": "(" * 10000 + "1" + ")" * 10000,
    "factorial of a huge number": "factorial(10**9)",
    "open a file": f"open('{PWNED}', 'w').write('x')",
    "globals": "globals()",
    "2**9**9": "2**9**9",
    "float overflow": "1e308*1e308",
    "huge integer literal": "9" * 5000,
    "keyword call": "round(1.5, ndigits=10**9)",
}
def test_tool_tables_agree():
    names = [t["function"]["name"] for t in TOOLS]
    assert names == ["calculate_math", "unit_converter", "get_current_weather", "get_current_time",
                     "get_exchange_rate", "translate_text"]
    assert set(names) == set(MOCK_RESULTS) == set(CHECK_ARGS)
    for tool in TOOLS:
        fn = tool["function"]
        assert fn["description"] and fn["parameters"]["type"] == "object"
        assert set(fn["parameters"]["required"]) <= set(fn["parameters"]["properties"])


@pytest.mark.parametrize("city", list(WEATHER))
def test_weather_facts(city):
    result = execute_tool("get_current_weather", {"location": city})
    assert (result["temperature"], result["condition"]) == WEATHER[city]


def test_time_facts_and_default_timezone():
    for tz, clock in TIMES.items():
        assert execute_tool("get_current_time", {"timezone": tz})["datetime"] == f"2025-03-07 {clock}"
    assert execute_tool("get_current_time", {})["datetime"] == "2025-03-07 14:30:00"


def test_exchange_facts_and_reverse_pairs():
    for (a, b), rate in RATES.items():
        assert execute_tool("get_exchange_rate", {"from_currency": a, "to_currency": b})["rate"] == rate
        reverse = RATES.get((b, a), round(1 / rate, 4))  # a listed pair wins over the computed reverse
        assert execute_tool("get_exchange_rate", {"from_currency": b, "to_currency": a})["rate"] == reverse


@pytest.mark.parametrize("value,src,dst,expected", UNITS)
def test_unit_facts(value, src, dst, expected):
    assert execute_tool("unit_converter", {"value": value, "from_unit": src, "to_unit": dst})["result"] == expected


def test_translation_facts():
    for text, lang, expected in TRANSLATIONS:
        assert execute_tool("translate_text", {"text": text, "target_language": lang})["translation"] == expected


def test_calculator_accepts_everyday_notation():
    cases = {"256*37": "9472", "2^10": "1024", "（3+4）×5": "35", "10÷4": "2.5", "7−10": "-3",
             "sqrt(16)+abs(-2)": "6", "2**0.5": "1.414213562", "1/3": "0.3333333333", "17 % 5": "2"}
    for expression, expected in cases.items():
        assert execute_tool("calculate_math", {"expression": expression}) == {"result": expected}, expression


def test_unknown_things_get_explicit_errors_never_defaults():
    assert "error" in execute_tool("get_current_weather", {"location": "Atlantis"})
    hinted = execute_tool("get_current_weather", {"location": "浦东"})
    assert hinted["error"] == "unknown location: 浦东" and "上海" in hinted["hint"]
    assert "error" in execute_tool("get_exchange_rate", {"from_currency": "USD", "to_currency": "KRW"})
    assert "error" in execute_tool("unit_converter", {"value": 1, "from_unit": "km", "to_unit": "parsec"})
    assert "error" in execute_tool("unit_converter", {"value": 1, "from_unit": "km", "to_unit": "kg"})
    assert "error" in execute_tool("translate_text", {"text": "未知的句子", "target_language": "english"})
    assert "error" in execute_tool("get_current_time", {"timezone": "Mars/Olympus"})
    assert execute_tool("search_web", {"query": "x"})["error"] == "unknown tool: search_web"
    assert "error" in execute_tool("calculate_math", {})  # missing argument
    assert "error" in execute_tool("calculate_math", {"expression": "1/0"})
    assert execute_tool("calculate_math", {"expression": "12x34"})["hint"] == "use * for multiplication"


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_calculator_inputs_fail_fast_without_side_effects(name):
    start = time.perf_counter()
    result = execute_tool("calculate_math", {"expression": HOSTILE[name]})
    assert "error" in result, result
    assert time.perf_counter() - start < 0.5
    assert not os.path.exists(PWNED)


def test_a_tool_that_hangs_in_c_code_is_killed_at_its_timeout(monkeypatch):
    """9**9**9 inside a tool holds the interpreter in C code: no signal or thread could stop it; the worker
    process is killed at the timeout, and the next call gets a fresh worker."""
    monkeypatch.setitem(MOCK_RESULTS, "calculate_math", lambda args: {"result": str(9 ** 9 ** 9)})
    TOOL_RUNNER.close()  # workers hold the tool tables they were started with
    try:
        start = time.perf_counter()
        assert execute_tool("calculate_math", {"expression": "1"}, timeout=0.5)["error"] == "timeout"
        assert time.perf_counter() - start < 1.0
    finally:
        monkeypatch.undo()
        TOOL_RUNNER.close()
    assert execute_tool("calculate_math", {"expression": "2+2"}) == {"result": "4"}


def _slow_weather(args):
    time.sleep(0.6)
    return {"location": args["location"], "temperature": "28°C"}


def test_sigterm_lets_a_call_in_flight_finish_and_ends_an_idle_worker():
    """A stopped run (`timeout`, `kill -- -PGID`) sends SIGTERM to the whole process group, tool workers
    included. The call a worker holds is answered with its real result, so the trainer's last step is not
    scored on broken calls; then the worker exits, as an idle one does at once."""
    import multiprocessing
    import signal
    import threading

    from trainer.tool_runner import ToolRunner

    runner = ToolRunner({"weather": _slow_weather})
    try:
        answer, before = {}, {p.pid for p in multiprocessing.active_children()}
        thread = threading.Thread(target=lambda: answer.update(runner.call("weather", {"location": "x"}, 5.0)))
        thread.start()
        deadline = time.time() + 5
        while not runner.conns and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the worker holds the call now
        busy = [p for p in multiprocessing.active_children() if p.pid not in before]
        assert len(busy) == 1 and busy[0].name == "tool-worker"
        os.kill(busy[0].pid, signal.SIGTERM)
        thread.join(timeout=30)
        assert answer == {"location": "x", "temperature": "28°C"}
        busy[0].join(timeout=30)  # returns when it exits; a busy machine is slow
        assert not busy[0].is_alive()  # it finished the call, then exited
        idle = runner._start()
        time.sleep(0.2)
        os.kill(idle[0].pid, signal.SIGTERM)
        idle[0].join(timeout=30)
        assert not idle[0].is_alive()
        runner._kill(idle)
    finally:
        runner.close()


def test_tool_failures_come_back_as_errors(monkeypatch):
    monkeypatch.setitem(MOCK_RESULTS, "translate_text", lambda args: 1 / 0)
    monkeypatch.setitem(MOCK_RESULTS, "get_current_time", lambda args: {"big": "x" * 100000})
    TOOL_RUNNER.close()
    try:
        assert execute_tool("translate_text", {"text": "a", "target_language": "english"}) == {
            "error": "tool failed: ZeroDivisionError"}
        capped = execute_tool("get_current_time", {})
        assert len(json.dumps(capped)) < MAX_TOOL_OUTPUT_CHARS + 100
    finally:
        monkeypatch.undo()
        TOOL_RUNNER.close()
    assert execute_tool("get_current_weather", {"location": "北京"})["temperature"] == "28°C"
    assert execute_tool("calculate_math", {"expression": object()})["error"].startswith("invalid arguments")
    assert execute_tool("unit_converter", {"value": 10 ** 400, "from_unit": "km", "to_unit": "miles"})[
        "error"].startswith("invalid arguments")


def test_parse_tool_calls_tolerates_malformed_calls():
    text = (
        'I will check.<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "北京"}}\n</tool_call>'
        '<tool_call>\nnot json\n</tool_call>'
        '<tool_call>\n[1, 2]\n</tool_call>'
        '<tool_call>\n{"arguments": {}}\n</tool_call>'
        '<tool_call>\n{"name": "calculate_math", "arguments": "{\\"expression\\": \\"1+1\\"}"}\n</tool_call>'
        '<tool_call>\n{"name": "calculate_math", "arguments": "not json"}\n</tool_call>'
        '<tool_call>\n{"name": "get_current_time"}\n</tool_call>'
        '<tool_call>\n{"name": "x", "arguments": [1]}\n</tool_call>'
        '<tool_call>\n{"name": "unclosed"'
    )
    assert parse_tool_calls(text) == [
        {"name": "get_current_weather", "arguments": {"location": "北京"}},
        {"name": "calculate_math", "arguments": {"expression": "1+1"}},  # OpenAI style: arguments as a string
        {"name": "get_current_time", "arguments": {}},
    ]
    assert count_parse_errors(text, parse_tool_calls(text)) == 6  # 9 opened, 3 parsed
    assert parse_tool_calls("no calls here") == []
    nested = '<tool_call><tool_call>{"name": "calculate_math", "arguments": {}}</tool_call></tool_call>'
    assert parse_tool_calls(nested) == [] and count_parse_errors(nested, []) == 2
    huge = '<tool_call>{"name": "calculate_math", "arguments": {"expression": "' + "1+" * 100000 + '1"}}</tool_call>'
    assert parse_tool_calls(huge) == []  # a runaway payload is not a call
    deep = "<tool_call>" + "[" * 100000 + "</tool_call>"
    assert parse_tool_calls(deep) == []
