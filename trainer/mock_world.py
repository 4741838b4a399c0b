"""
The mock world behind the six tools: the data each tool serves (weather, clocks, exchange rates, unit factors,
translations) and the functions that answer a call from it. trainer/train_agent.py's MOCK_RESULTS maps each
tool name to its function here; scripts/make_agent_data.py builds its data from the same tables, so a value
the model is taught is a value the tool returns. Read it when adding a tool or changing what one knows.
"""
import math
import re

from trainer.calculator import evaluate_expression
from trainer.tool_runner import ToolError


# --- the data ----------------------------------------------------------------------------------------------

# city -> (temperature, condition, humidity)
WEATHER_DATA = {
    "北京": ("28°C", "晴", "35%"),
    "上海": ("15°C", "多云", "70%"),
    "广州": ("32°C", "闷热", "85%"),
    "深圳": ("30°C", "晴", "75%"),
    "杭州": ("22°C", "阴", "65%"),
    "成都": ("18°C", "小雨", "90%"),
    "武汉": ("25°C", "多云", "60%"),
    "南京": ("20°C", "晴", "55%"),
    "西安": ("16°C", "大风", "30%"),
    "重庆": ("26°C", "阴", "80%"),
    "Tokyo": ("12°C", "晴", "45%"),
    "New York": ("8°C", "多云", "50%"),
    "London": ("5°C", "小雨", "85%"),
    "Paris": ("10°C", "阴", "70%"),
    "Sydney": ("25°C", "晴朗", "60%"),
}
# other names the weather service understands, mapped to the canonical city
CITY_ALIASES = {
    "beijing": "北京", "shanghai": "上海", "guangzhou": "广州", "shenzhen": "深圳", "hangzhou": "杭州",
    "chengdu": "成都", "wuhan": "武汉", "nanjing": "南京", "xi'an": "西安", "xian": "西安", "chongqing": "重庆",
    "东京": "Tokyo", "纽约": "New York", "伦敦": "London", "巴黎": "Paris", "悉尼": "Sydney",
}
# places the service does not know, but whose city it can suggest (correction tasks: retry with the city)
LOCATION_HINTS = {
    "浦东": "上海", "徐汇": "上海", "海淀": "北京", "朝阳区": "北京", "天河": "广州", "南山": "深圳",
    "西湖区": "杭州", "武侯": "成都", "雁塔": "西安", "渝中": "重庆",
    "Manhattan": "New York", "Brooklyn": "New York", "Shibuya": "Tokyo", "涩谷": "Tokyo",
    "Westminster": "London", "Montmartre": "Paris",
}

MOCK_DATE = "2025-03-07"
MOCK_WEEKDAY = "Friday"
TIME_DATA = {
    "Asia/Shanghai": "14:30:00",
    "America/New_York": "01:30:00",
    "Europe/London": "06:30:00",
    "Asia/Tokyo": "15:30:00",
    "Europe/Paris": "07:30:00",
    "Australia/Sydney": "17:30:00",
}
DEFAULT_TIMEZONE = "Asia/Shanghai"
TIMEZONE_ALIASES = {
    "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "beijing": "Asia/Shanghai", "shanghai": "Asia/Shanghai",
    "china": "Asia/Shanghai", "中国": "Asia/Shanghai", "utc+8": "Asia/Shanghai", "cst": "Asia/Shanghai",
    "东京": "Asia/Tokyo", "tokyo": "Asia/Tokyo", "日本": "Asia/Tokyo", "japan": "Asia/Tokyo",
    "纽约": "America/New_York", "new york": "America/New_York",
    "伦敦": "Europe/London", "london": "Europe/London", "英国": "Europe/London",
    "巴黎": "Europe/Paris", "paris": "Europe/Paris", "法国": "Europe/Paris",
    "悉尼": "Australia/Sydney", "sydney": "Australia/Sydney",
}

# listed pairs; the reverse of a pair is 1/rate rounded to 4 decimals
EXCHANGE_RATES = {
    ("USD", "CNY"): 7.21, ("EUR", "CNY"): 7.85, ("GBP", "CNY"): 9.12, ("JPY", "CNY"): 0.048,
    ("USD", "EUR"): 0.92, ("USD", "GBP"): 0.79, ("CNY", "JPY"): 20.83, ("AUD", "CNY"): 4.72,
}
CURRENCY_ALIASES = {
    "美元": "USD", "人民币": "CNY", "欧元": "EUR", "英镑": "GBP", "日元": "JPY", "澳元": "AUD",
    "rmb": "CNY", "yuan": "CNY", "dollar": "USD", "euro": "EUR", "pound": "GBP", "yen": "JPY",
}

# (from, to) -> factor; temperatures use the real formula instead
UNIT_FACTORS = {
    ("km", "miles"): 0.621371, ("miles", "km"): 1.60934,
    ("kg", "pounds"): 2.20462, ("pounds", "kg"): 0.453592,
    ("meters", "feet"): 3.28084, ("feet", "meters"): 0.3048,
}
UNIT_ALIASES = {
    "km": "km", "kilometer": "km", "kilometers": "km", "公里": "km", "千米": "km",
    "miles": "miles", "mile": "miles", "mi": "miles", "英里": "miles",
    "kg": "kg", "kilogram": "kg", "kilograms": "kg", "公斤": "kg", "千克": "kg",
    "pounds": "pounds", "pound": "pounds", "lb": "pounds", "lbs": "pounds", "磅": "pounds",
    "meters": "meters", "meter": "meters", "m": "meters", "米": "meters",
    "feet": "feet", "foot": "feet", "ft": "feet", "英尺": "feet",
    "celsius": "celsius", "c": "celsius", "°c": "celsius", "摄氏度": "celsius",
    "fahrenheit": "fahrenheit", "f": "fahrenheit", "°f": "fahrenheit", "华氏度": "fahrenheit",
}

# (text, target language) -> translation
TRANSLATIONS = {
    ("你好世界", "english"): "Hello World",
    ("今天天气真好", "english"): "The weather is nice today",
    ("机器学习很有趣", "english"): "Machine learning is interesting",
    ("谢谢你的帮助", "english"): "Thank you for your help",
    ("我爱北京", "english"): "I love Beijing",
    ("早上好", "english"): "Good morning",
    ("祝你好运", "english"): "Good luck",
    ("欢迎来到中国", "english"): "Welcome to China",
    ("Good morning", "chinese"): "早上好",
    ("I love programming", "chinese"): "我喜欢编程",
    ("Happy birthday", "chinese"): "生日快乐",
    ("Hello World", "chinese"): "你好世界",
    ("See you tomorrow", "chinese"): "明天见",
    ("Thank you very much", "chinese"): "非常感谢",
    ("Nice to meet you", "chinese"): "很高兴认识你",
    ("Artificial intelligence", "chinese"): "人工智能",
}
LANGUAGE_ALIASES = {
    "english": "english", "en": "english", "英文": "english", "英语": "english",
    "chinese": "chinese", "zh": "chinese", "中文": "chinese", "汉语": "chinese",
}


# --- the tools ---------------------------------------------------------------------------------------------

def _norm(text) -> str:
    return str(text).strip().lower()


THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")  # 1,250 or 12,345.5


def _to_number(value):
    if isinstance(value, bool):
        raise ToolError("value must be a number")
    text = str(value).strip()
    if isinstance(value, str) and "," in text:
        if not THOUSANDS.fullmatch(text):  # "1,5": a decimal comma, or a typo; 15 would be a guess
            raise ToolError(f"value must be a number, got {text[:40]!r}", hint="write decimals with a dot")
        text = text.replace(",", "")
    try:
        number = value if isinstance(value, (int, float)) else float(text)
    except ValueError:
        raise ToolError(f"value must be a number, got {text[:40]!r}") from None
    if not math.isfinite(number) or abs(number) > 1e15:
        raise ToolError(f"value out of range: {text[:40]}", hint="use a value below 1e15")
    return number


def tool_calculate_math(args):  # the evaluator: trainer/calculator.py
    return {"result": evaluate_expression(str(args["expression"]))}


def tool_unit_converter(args):
    value = _to_number(args["value"])
    src = UNIT_ALIASES.get(_norm(args["from_unit"]))
    dst = UNIT_ALIASES.get(_norm(args["to_unit"]))
    supported = "km, miles, kg, pounds, meters, feet, celsius, fahrenheit"
    if src is None or dst is None:
        bad = args["from_unit"] if src is None else args["to_unit"]
        raise ToolError(f"unknown unit: {str(bad)[:40]}", hint=f"supported units: {supported}")
    if (src, dst) == ("celsius", "fahrenheit"):
        result = value * 1.8 + 32
    elif (src, dst) == ("fahrenheit", "celsius"):
        result = (value - 32) / 1.8
    elif src == dst:
        result = value
    elif (src, dst) in UNIT_FACTORS:
        result = value * UNIT_FACTORS[(src, dst)]
    else:
        raise ToolError(f"cannot convert {src} to {dst}", hint=f"supported units: {supported}")
    return {"value": value, "from_unit": src, "to_unit": dst, "result": round(result, 4)}


def resolve_city(location: str):
    name = str(location).strip()
    if name in WEATHER_DATA:
        return name
    if name in CITY_ALIASES:
        return CITY_ALIASES[name]
    lowered = {k.lower(): k for k in WEATHER_DATA}
    return lowered.get(name.lower()) or CITY_ALIASES.get(name.lower())


def tool_get_current_weather(args):
    location = str(args["location"]).strip()
    city = resolve_city(location)
    if city is None:
        if location in LOCATION_HINTS:
            parent = LOCATION_HINTS[location]
            raise ToolError(
                f"unknown location: {location}", hint=f"{location} is in {parent}; query {parent}"
            )
        raise ToolError(f"unknown location: {location[:40]}", hint="supported: " + ", ".join(WEATHER_DATA))
    temperature, condition, humidity = WEATHER_DATA[city]
    return {"city": city, "temperature": temperature, "condition": condition, "humidity": humidity}


def tool_get_current_time(args):
    tz = str(args.get("timezone") or DEFAULT_TIMEZONE).strip()
    canonical = {k.lower(): k for k in TIME_DATA}.get(tz.lower()) or TIMEZONE_ALIASES.get(tz.lower()) \
        or TIMEZONE_ALIASES.get(tz)
    if canonical is None:
        raise ToolError(f"unknown timezone: {tz[:40]}", hint="supported: " + ", ".join(TIME_DATA))
    return {"timezone": canonical, "datetime": f"{MOCK_DATE} {TIME_DATA[canonical]}", "weekday": MOCK_WEEKDAY}


def _currency(code):
    text = str(code).strip()
    return CURRENCY_ALIASES.get(text) or CURRENCY_ALIASES.get(text.lower()) or text.upper()


def exchange_rate(src: str, dst: str):
    """Listed pair, its reverse (1/rate, 4 decimals), 1.0 for the same known currency, else None."""
    if src == dst:
        return 1.0 if src in KNOWN_CURRENCIES else None
    if (src, dst) in EXCHANGE_RATES:
        return EXCHANGE_RATES[(src, dst)]
    if (dst, src) in EXCHANGE_RATES:
        return round(1 / EXCHANGE_RATES[(dst, src)], 4)
    return None


def tool_get_exchange_rate(args):
    src, dst = _currency(args["from_currency"]), _currency(args["to_currency"])
    rate = exchange_rate(src, dst)
    if rate is None:
        pairs = ", ".join(f"{a}->{b}" for a, b in EXCHANGE_RATES)
        raise ToolError(f"unknown currency pair: {src[:10]}->{dst[:10]}", hint=f"supported pairs: {pairs}")
    return {"from": src, "to": dst, "rate": rate}


KNOWN_CURRENCIES = {c for pair in EXCHANGE_RATES for c in pair}
TEXT_QUOTES_AND_STOPS = "。.!!??\"'“”"  # characters stripped from both ends of a text to translate


def tool_translate_text(args):
    text = str(args["text"]).strip().strip(TEXT_QUOTES_AND_STOPS)
    language = LANGUAGE_ALIASES.get(_norm(args["target_language"]))
    if language is None:
        raise ToolError(f"unsupported target language: {str(args['target_language'])[:20]}",
                        hint="use english or chinese")
    for (source, target), translation in TRANSLATIONS.items():
        if target == language and source.lower() == text.lower():
            return {"text": text, "target_language": language, "translation": translation}
    raise ToolError(f"no translation available for: {text[:40]}")
