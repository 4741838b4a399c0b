"""
The phrasing tables of scripts/make_agent_data.py: how users name things and ask for them, and how answers
read. Data only; the generator draws from it.

    *_NAMES, *_PLACES, ...   display names of the tool world's canonical cities, timezones, currencies, units
    *_Q                      user templates of one intent: {"train": {lang: [...]}, "eval": {lang: [...]}}
    NO_TOOL_*                no_tool questions ("train" kinds hold (question, answer) pairs, the "topic" kind
                             templates x topics; eval: questions)
    OPENERS, CLOSERS, ...    train-only variety around a prompt
    *_A                      answer templates (train style, also the RL reference answer)

The "train" lists hold the SFT and the RL phrasings together; carve_rl (at the end) splits them (every
fifth is RL's), and "eval" lists are the held-out set's alone. make_agent_data.check_phrasings refuses data
where one phrasing sits in two splits, naming both tables. To add a phrasing, append it to a list: the shipped
RL pool and held-out sets change only when an "rl" or "eval" phrasing does.
"""

from trainer.mock_world import (
    EXCHANGE_RATES, LOCATION_HINTS, TIME_DATA, TRANSLATIONS, UNIT_FACTORS, WEATHER_DATA, exchange_rate,
)
from trainer.train_agent import TOOLS
from dataset.no_tool_frames import ASK_FRAMES, MORE_TOPICS

LANGS = ("zh", "en")
TOOL_NAMES = [t["function"]["name"] for t in TOOLS]

SYSTEM_PROMPTS = [
    "你是一个有用的AI助手。",
    "你是 MiniMind,一个乐于助人的智能助手。",
    "你是一个可以调用工具的AI助手,需要时请使用工具。",
    "You are a helpful assistant.",
    "You are MiniMind, a helpful AI assistant.",
    "You are an AI assistant that can call tools when needed.",
]
# what a tool-calling turn may say, by kind of turn: first call, next call of a chain, retry after an error
PREFACES = {
    "first": {
        "zh": ["我来查一下。", "好的,我调用工具看看。", "稍等,我来处理。"],
        "en": ["Let me check.", "Sure, let me look that up.", "One moment."],
    },
    "next": {
        "zh": ["拿到结果了,再算一步。", "接着调用下一个工具。"],
        "en": ["Got it, one more step.", "Now the next call."],
    },
    "retry": {
        "zh": ["按提示修改参数再试一次。", "换个参数重试。"],
        "en": ["Let me retry as the hint says.", "Retrying with fixed arguments."],
    },
}

# ==========================================================================================================
# How users name things (the calls always use the canonical names of the tool world)
# ==========================================================================================================

# canonical city (as in WEATHER_DATA) -> (Chinese name, English name)
CITY_NAMES = {
    "北京": ("北京", "Beijing"),
    "上海": ("上海", "Shanghai"),
    "广州": ("广州", "Guangzhou"),
    "深圳": ("深圳", "Shenzhen"),
    "杭州": ("杭州", "Hangzhou"),
    "成都": ("成都", "Chengdu"),
    "武汉": ("武汉", "Wuhan"),
    "南京": ("南京", "Nanjing"),
    "西安": ("西安", "Xi'an"),
    "重庆": ("重庆", "Chongqing"),
    "Tokyo": ("东京", "Tokyo"),
    "New York": ("纽约", "New York"),
    "London": ("伦敦", "London"),
    "Paris": ("巴黎", "Paris"),
    "Sydney": ("悉尼", "Sydney"),
}
WEATHER_CITIES = list(WEATHER_DATA)
if sorted(CITY_NAMES) != sorted(WEATHER_CITIES):
    raise ValueError("CITY_NAMES: every city of WEATHER_DATA needs display names, and no other city")
# IANA timezone -> (Chinese place names, English place names)
TIME_PLACES = {
    "Asia/Shanghai": (["北京", "上海", "中国"], ["Beijing", "Shanghai", "China"]),
    "Asia/Tokyo": (["东京", "日本"], ["Tokyo", "Japan"]),
    "America/New_York": (["纽约"], ["New York"]),
    "Europe/London": (["伦敦", "英国"], ["London", "the UK"]),
    "Europe/Paris": (["巴黎", "法国"], ["Paris", "France"]),
    "Australia/Sydney": (["悉尼"], ["Sydney"]),
}
TIMEZONES = list(TIME_DATA)
if sorted(TIME_PLACES) != sorted(TIMEZONES):
    raise ValueError("TIME_PLACES: every timezone of TIME_DATA needs place names, and no other timezone")
# weather city -> its timezone, for "time and weather in X" questions
CITY_TIMEZONES = {
    "北京": "Asia/Shanghai",
    "上海": "Asia/Shanghai",
    "Tokyo": "Asia/Tokyo",
    "New York": "America/New_York",
    "London": "Europe/London",
    "Paris": "Europe/Paris",
    "Sydney": "Australia/Sydney",
}
# currency code -> (Chinese name, English name)
CURRENCY_NAMES = {
    "USD": ("美元", "US dollar"),
    "CNY": ("人民币", "Chinese yuan"),
    "EUR": ("欧元", "euro"),
    "GBP": ("英镑", "British pound"),
    "JPY": ("日元", "Japanese yen"),
    "AUD": ("澳元", "Australian dollar"),
}
# every listed pair and its reverse, in a fixed order
CURRENCY_PAIRS = list(dict.fromkeys([p for a, b in EXCHANGE_RATES for p in ((a, b), (b, a))]))
if any(exchange_rate(a, b) is None for a, b in CURRENCY_PAIRS):
    raise ValueError("CURRENCY_PAIRS: a pair the tool world has no rate for")
# canonical unit -> (Chinese words, English words)
UNIT_NAMES = {
    "km": (["公里", "千米", "km"], ["km", "kilometers"]),
    "miles": (["英里"], ["miles"]),
    "kg": (["公斤", "千克", "kg"], ["kg", "kilograms"]),
    "pounds": (["磅"], ["pounds", "lbs"]),
    "meters": (["米"], ["meters"]),
    "feet": (["英尺"], ["feet"]),
    "celsius": (["摄氏度"], ["degrees Celsius", "°C"]),
    "fahrenheit": (["华氏度"], ["degrees Fahrenheit", "°F"]),
}
LENGTH_WEIGHT_PAIRS = list(UNIT_FACTORS)
UNIT_PAIRS = LENGTH_WEIGHT_PAIRS + [("celsius", "fahrenheit"), ("fahrenheit", "celsius")]
UNIT_RANGES = {
    "km": (1, 1000),
    "miles": (1, 600),
    "kg": (1, 300),
    "pounds": (1, 600),
    "meters": (1, 5000),
    "feet": (1, 9000),
    "celsius": (-20, 45),
    "fahrenheit": (-4, 110),
}
LANGUAGE_NAMES = {"english": (["英文", "英语"], ["English"]), "chinese": (["中文"], ["Chinese"])}
TRANSLATION_ITEMS = list(TRANSLATIONS.items())
WEEKDAY_ZH = {
    "Monday": "星期一",
    "Tuesday": "星期二",
    "Wednesday": "星期三",
    "Thursday": "星期四",
    "Friday": "星期五",
    "Saturday": "星期六",
    "Sunday": "星期日",
}
# correction (a): places the weather service does not know but can point to their city
HINT_PLACES = {"zh": list(LOCATION_HINTS), "en": [p for p in LOCATION_HINTS if p.isascii()]}
# math operators as users write them
OP_SYMBOLS = {"+": ["+"], "-": ["-"], "*": ["*", "×"], "/": ["/", "÷"]}
OP_WORDS = {
    "zh": {
        "+": ["加", "加", " 加 ", "加上"],
        "-": ["减", "减", " 减 ", "减去"],
        "*": ["乘以", "乘以", "乘", " 乘 "],
        "/": ["除以", " 除以 "],
    },
    "en": {
        "+": [" plus "],
        "-": [" minus ", " take away "],
        "*": [" times ", " multiplied by "],
        "/": [" divided by ", " over "],
    },
}
POWER_WORDS = {"zh": {2: "的平方", 3: "的立方"}, "en": {2: " squared", 3: " cubed"}}

# error category (SFT only): requests the tools cannot serve
ERROR_CITIES = {
    "zh": ["天津", "哈尔滨", "拉萨", "厦门", "柏林", "首尔"],
    "en": ["Berlin", "Moscow", "Seoul", "Dubai", "Toronto", "Madrid"],
}
ERROR_CURRENCIES = {
    "KRW": ("韩元", "Korean won"),
    "INR": ("印度卢比", "Indian rupee"),
    "CHF": ("瑞士法郎", "Swiss franc"),
    "THB": ("泰铢", "Thai baht"),
}
ERROR_TEXTS = {
    "zh": [
        ("我明天要去上海出差", "english"),
        ("这道菜太辣了", "english"),
        ("周末一起去爬山吧", "english"),
        ("Where is the train station", "chinese"),
    ],
    "en": [
        ("Where is the train station", "chinese"),
        ("The meeting is postponed", "chinese"),
        ("I lost my keys", "chinese"),
        ("这道菜太辣了", "english"),
    ],
}
ERROR_TIMEZONES = [
    ("莫斯科", "Moscow", "Europe/Moscow"),
    ("迪拜", "Dubai", "Asia/Dubai"),
    ("首尔", "Seoul", "Asia/Seoul"),
    ("柏林", "Berlin", "Europe/Berlin"),
]

# ==========================================================================================================
# User templates: "train" (SFT and RL) and "eval" (held out) lists never share a phrasing
# ==========================================================================================================

WEATHER_Q = {
    "train": {
        "zh": [
            "{city}今天天气怎么样?",
            "{city}现在天气如何?",
            "帮我查一下{city}的天气。",
            "{city}现在多少度?",
            "我要去{city}出差,那边现在天气怎么样?",
            "查询{city}天气",
            "{city}冷不冷?",
            "下周要去{city}玩,现在那边天气怎么样?",
            "告诉我{city}的天气。",
            "{city}下雨了吗?",
            "{city}热不热?",
            "现在{city}的气温是多少?",
            "{city}的天气发我一下",
            "{city}天气",
            "明天早上要飞{city},那边现在天气咋样?",
            "看下{city}天气",
            "{city}的温度和湿度是多少?",
            "我需要知道{city}现在的天气。",
            "周末打算去{city}逛逛,先查查那边天气。",
            "{city}那边天气好不好?",
            "想知道{city}今天的天气",
            "{city}今天适合出门吗?天气怎么样",
            "请查询{city}的实时天气",
            "{city}现在是晴天还是下雨?",
            "给我说说{city}的天气情况",
            "{city}天气如何,要带伞吗?",
            "帮忙看一下{city}的气温",
        ],
        "en": [
            "What's the weather like in {city}?",
            "How is the weather in {city} right now?",
            "Check the weather in {city} for me.",
            "Is it cold in {city} today?",
            "Weather in {city}?",
            "What's the temperature in {city} now?",
            "{city} weather today?",
            "How hot is it in {city}?",
            "Is it sunny in {city} right now?",
            "I need the weather for {city}.",
            "Tell me about the weather in {city}.",
            "My flight lands in {city} tomorrow morning. How's the weather there now?",
            "Heading to {city} next week for work - what's the weather like there?",
            "Display the weather for {city}.",
            "How humid is it in {city}?",
            "Look up the weather in {city}.",
            "Should I pack a jacket for {city}? What's the weather there?",
            "{city}: what's the weather?",
            "Weather check for {city}, please.",
            "Weather update for {city}?",
            "What's it like outside in {city} today?",
            "Any rain in {city} right now?",
            "Please check {city}'s weather.",
            "Is it warm in {city} at the moment?",
            "Current conditions in {city}?",
            "Find out the weather in {city} for me.",
            "How's {city} looking weather-wise today?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦查一下{city}眼下的天气",
            "{city}当下天气状况怎么样?",
            "请问{city}那边现在是什么天气?",
            "{city}这会儿天气好吗?",
            "想了解一下{city}当前的气温和天气状况。",
            "出门前帮我看看{city}的天气吧",
        ],
        "en": [
            "What are conditions like in {city} today?",
            "Can you see what the weather is in {city}?",
            "Could you tell me the current weather conditions in {city}?",
            "Any idea what the weather is doing in {city} at the moment?",
            "I'd like to know how warm it is in {city} now.",
            "Give me {city}'s weather, please.",
        ],
    },
}
TIME_Q = {
    "train": {
        "zh": [
            "{place}现在几点?",
            "{place}现在几点了?",
            "查一下{place}的当前时间。",
            "{place}那边现在是什么时间?",
            "现在{place}是几点钟?",
            "{place}时间现在是多少?",
            "告诉我{place}现在的时间。",
            "我要给{place}的朋友打电话,那边现在几点?",
            "{place}几点了",
            "我的航班快到{place}了,当地现在几点?",
            "{place}现在是上午还是下午?",
            "跟{place}的同事开会前确认一下,那边现在几点?",
            "现在{place}时间是几点?",
            "查查{place}现在的时间",
            "我需要{place}现在的时间",
            "{place}现在是几点几分?",
            "请告诉我{place}现在的时间",
            "{place}那里几点了?",
            "想知道{place}的当地时间",
            "帮忙查一下{place}现在几点",
            "{place}此时是几点?",
            "现在{place}是几点几分?",
            "{place}的时间是多少?",
        ],
        "en": [
            "What time is it in {place}?",
            "What's the current time in {place}?",
            "Tell me the time in {place}.",
            "What time is it now in {place}?",
            "Current time in {place}?",
            "Do you know what time it is in {place}?",
            "My flight lands in {place} soon. What time is it there?",
            "I'm about to call a friend in {place}; what time is it over there?",
            "Time in {place}?",
            "Check the time in {place} for me.",
            "What's the time in {place} right now?",
            "Is it morning or evening in {place} now?",
            "How late is it in {place} now?",
            "I have a meeting with people in {place}. What's their time now?",
            "Look up the current time in {place}.",
            "Show me what time it is in {place}.",
            "What's the local time in {place}?",
            "Please tell me the time in {place}.",
            "Time check: {place}?",
            "Find the current time in {place} for me.",
            "What hour is it in {place} now?",
            "Do you know the local time in {place}?",
            "Give me the time in {place}.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦告诉我{place}眼下的时间",
            "{place}这会儿几点钟?",
            "请问{place}此刻是几点?",
            "{place}当地时间是多少?",
            "帮我看看{place}那边几点了",
        ],
        "en": [
            "What hour is it over in {place}?",
            "Can you see what time it is in {place} now?",
            "Could you check the local time in {place}?",
            "Any idea what the clock says in {place} right now?",
            "I need the current local time for {place}.",
        ],
    },
}
TIME_LOCAL_Q = {  # no place: the default timezone
    "train": {
        "zh": [
            "现在几点了?",
            "现在几点?",
            "请告诉我现在的时间。",
            "查一下现在的时间",
            "几点了?",
            "现在什么时间了?",
            "告诉我现在几点",
            "现在是几点几分?",
            "看一下时间",
            "今天星期几,现在几点?",
            "我手机没电了,现在几点了?",
            "现在时间是多少?",
            "报一下当前时间",
            "现在几点钟?",
            "请问现在几点?",
            "帮我看看现在几点",
            "现在的时间是?",
        ],
        "en": [
            "What time is it now?",
            "What's the time?",
            "Tell me the current time.",
            "What time is it?",
            "Current time?",
            "Got the time?",
            "My phone died, what time is it now?",
            "What's today's date and the time?",
            "Check the clock for me.",
            "Time now?",
            "How late is it now?",
            "What time do you have?",
            "Please tell me the time now.",
            "Could you check the current time?",
            "What's the current time?",
        ],
    },
    "eval": {
        "zh": ["麻烦报一下眼下的时间", "此刻几点了?", "这会儿几点钟了?", "能告诉我此刻的时间吗?"],
        "en": [
            "What hour is it at the moment?",
            "Can you see what time it is now?",
            "Do you have the time right now?",
            "What's the time at the moment?",
        ],
    },
}
EXCHANGE_Q = {
    "train": {
        "zh": [
            "{src}兑{dst}的汇率是多少?",
            "1{src}等于多少{dst}?",
            "现在{src}换{dst}的汇率多少?",
            "查一下{src}对{dst}的汇率。",
            "{src}兑换{dst}汇率",
            "今天{src}兑{dst}是多少?",
            "下个月要出国,{src}换{dst}现在什么价?",
            "{src}对{dst}汇率多少",
            "告诉我{src}兑{dst}的汇率。",
            "帮我查查{src}到{dst}的汇率",
            "{src}换成{dst}按什么汇率算?",
            "现在换{dst}的话,1{src}值多少?",
            "{src}兑{dst}现价",
            "我需要{src}兑{dst}的实时汇率",
            "最近{src}兑{dst}汇率是多少?",
            "给我查个汇率:{src}兑{dst}",
            "{src}兑换{dst}是多少?",
            "请查一下{src}对{dst}的最新汇率",
            "{src}和{dst}的汇率怎么样?",
            "1{src}能换几{dst}?",
            "想查{src}到{dst}的汇率",
            "{src}换{dst}划算吗?汇率多少",
            "请告诉我{src}兑{dst}的价格",
        ],
        "en": [
            "What's the exchange rate from {src} to {dst}?",
            "How many {dst} is one {src} worth?",
            "{src} to {dst} rate?",
            "Check the {src}/{dst} exchange rate.",
            "What is 1 {src} in {dst}?",
            "Current exchange rate {src} -> {dst}?",
            "I'm travelling next month. What's the {src} to {dst} rate now?",
            "Tell me the {src} to {dst} exchange rate.",
            "How much {dst} do I get for 1 {src}?",
            "Exchange rate for {src} to {dst}, please.",
            "What's 1 {src} worth in {dst} right now?",
            "Look up the rate from {src} to {dst}.",
            "{src} vs {dst}: what's the rate?",
            "Converting {src} into {dst}: what rate do I get?",
            "Rate from {src} to {dst}?",
            "What does one {src} get me in {dst}?",
            "Please check the {src} to {dst} rate.",
            "How much {dst} is a single {src}?",
            "What's the latest {src}/{dst} rate?",
            "Find me the exchange rate between {src} and {dst}.",
            "What does {src} trade for in {dst}?",
            "Give me the {src} to {dst} exchange rate.",
            "How many {dst} per {src} today?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦查查{src}换{dst}眼下的价格",
            "{src}对{dst}这会儿是什么汇率?",
            "请问{src}和{dst}之间的汇率现在是多少?",
            "一{src}现在能兑换多少{dst}?",
            "帮我看看{src}兑{dst}最新汇率",
        ],
        "en": [
            "What's the going rate from {src} to {dst}?",
            "Can you see how many {dst} one {src} gets right now?",
            "Could you look up how much one {src} buys in {dst}?",
            "I need the {src}-to-{dst} conversion rate.",
            "What's {src} trading at against {dst} today?",
        ],
    },
}
UNIT_Q = {
    "train": {
        "zh": [
            "{value}{src}等于多少{dst}?",
            "把{value}{src}换算成{dst}。",
            "{value}{src}是多少{dst}?",
            "帮我把{value}{src}转换成{dst}",
            "{value}{src}合多少{dst}?",
            "{value}{src}换成{dst}是多少?",
            "做作业遇到一题:{value}{src}等于多少{dst}?",
            "资料上写的是{value}{src},换成{dst}是多少?",
            "朋友说有{value}{src},那是多少{dst}?",
            "{dst}的话,{value}{src}是多少?",
            "告诉我{value}{src}等于几{dst}",
            "单位换算:{value}{src} -> {dst}",
            "{value}{src}能换算成多少{dst}?",
            "我需要把{value}{src}换算成{dst}",
            "问个换算:{value}{src}是几{dst}?",
            "{value}{src}大约多少{dst}?",
            "换算{value}{src}到{dst}",
            "请把{value}{src}换成{dst}",
            "{value}{src}相当于几{dst}?",
            "{value}{src}换算为{dst}是多少?",
            "帮忙换算:{value}{src}等于多少{dst}",
            "如果是{value}{src},换成{dst}有多少?",
            "我想把{value}{src}转成{dst}",
            "{value}{src}折成{dst}是多少?",
            "计算{value}{src}是多少{dst}",
        ],
        "en": [
            "How many {dst} is {value} {src}?",
            "Convert {value} {src} to {dst}.",
            "What is {value} {src} in {dst}?",
            "{value} {src} in {dst}?",
            "Please convert {value} {src} into {dst}.",
            "How much is {value} {src} in {dst}?",
            "My notes say {value} {src}. What's that in {dst}?",
            "I need to convert {value} {src} to {dst}.",
            "Tell me what {value} {src} is in {dst}.",
            "{value} {src} to {dst}, please.",
            "Unit conversion: {value} {src} -> {dst}",
            "In {dst}, how much is {value} {src}?",
            "Change {value} {src} into {dst}.",
            "What do {value} {src} equal in {dst}?",
            "Help me convert {value} {src} to {dst}.",
            "A friend told me it's {value} {src}. How much is that in {dst}?",
            "What's {value} {src} in {dst}?",
            "Please change {value} {src} to {dst}.",
            "{value} {src} equals how many {dst}?",
            "Can you convert {value} {src} into {dst}?",
            "How much is {value} {src} when converted to {dst}?",
            "Work out {value} {src} in {dst}.",
            "If I have {value} {src}, how many {dst} is that?",
            "Convert this to {dst}: {value} {src}",
        ],
    },
    "eval": {
        "zh": [
            "麻烦把{value}{src}折算为{dst}",
            "{value}{src}等同于多少{dst}?",
            "请问{value}{src}折合成{dst}是多少?",
            "我想知道{value}{src}相当于多少{dst}",
            "{value}{src}用{dst}表示是多少?",
        ],
        "en": [
            "Turn {value} {src} into {dst} for me.",
            "How many {dst} make up {value} {src}?",
            "I have {value} {src}; what does that come to in {dst}?",
            "Could you express {value} {src} in {dst}?",
            "Roughly how many {dst} are in {value} {src}?",
        ],
    },
}
MATH_Q = {
    "train": {
        "zh": [
            "{expr}等于多少?",
            "帮我算一下{expr}",
            "计算{expr}",
            "{expr}的结果是多少?",
            "请算出{expr}",
            "{expr}=?",
            "算一下{expr}",
            "{expr}是多少",
            "我算不清了,{expr}到底等于多少?",
            "做作业遇到{expr},结果是多少?",
            "告诉我{expr}的答案",
            "心算不出来:{expr}",
            "{expr},算一下结果",
            "请计算:{expr}",
            "{expr}=多少?",
            "数学题:{expr}",
            "快速算一下{expr}",
            "请帮我算{expr}",
            "{expr}的答案是多少?",
            "能算一下{expr}吗?",
            "{expr}等于几?",
            "计算一下:{expr}",
            "求{expr}的结果",
            "{expr}算出来等于多少",
            "帮忙算算{expr}",
        ],
        "en": [
            "What is {expr}?",
            "Calculate {expr}.",
            "Compute {expr} for me.",
            "What's {expr} equal to?",
            "Please work out {expr}.",
            "{expr} = ?",
            "Solve {expr}.",
            "What's the answer to {expr}?",
            "Help me with this sum: {expr}",
            "I'm checking my homework: what is {expr}?",
            "Tell me the result of {expr}.",
            "{expr}?",
            "Evaluate {expr}.",
            "How much is {expr}?",
            "Do the math for me: {expr}",
            "Math question: {expr}",
            "What does {expr} equal?",
            "Can you calculate {expr}?",
            "Please compute {expr}.",
            "What's the result of {expr}?",
            "Work out {expr} for me.",
            "Find the value of {expr}.",
            "Calculate this: {expr}",
            "{expr} equals what?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦求一下{expr}",
            "{expr}算出来是多少?",
            "麻烦算算{expr}是多少",
            "{expr}得几?",
            "请帮我求{expr}的值",
        ],
        "en": [
            "What number do you get from {expr}?",
            "Figure this one out: {expr}",
            "Can you figure out {expr}?",
            "Quick question: what does {expr} come to?",
            "I need the value of {expr}.",
        ],
    },
}
TRANSLATE_Q = {
    "train": {
        "zh": [
            "把“{text}”翻译成{lang}",
            "“{text}”用{lang}怎么说?",
            "请将“{text}”译成{lang}。",
            "“{text}”翻译成{lang}是什么?",
            "帮我翻译一下:{text}(翻成{lang})",
            "{text} 翻译成{lang}",
            "翻译成{lang}:“{text}”",
            "{lang}里“{text}”怎么表达?",
            "我想给朋友发一句“{text}”,用{lang}怎么写?",
            "帮我把“{text}”翻成{lang}",
            "“{text}”,翻译成{lang}",
            "告诉我“{text}”用{lang}怎么说",
            "用{lang}说“{text}”",
            "翻译:“{text}”,目标语言{lang}",
            "请用{lang}翻译“{text}”",
            "能把“{text}”翻译成{lang}吗?",
            "请把“{text}”翻成{lang}",
            "“{text}”的{lang}怎么说?",
            "帮我用{lang}写出“{text}”",
            "“{text}”译成{lang}是什么意思?",
            "“{text}”用{lang}怎么翻译?",
            "把这句翻译成{lang}:{text}",
            "我需要“{text}”的{lang}翻译",
        ],
        "en": [
            "Translate '{text}' into {lang}.",
            "How do you say '{text}' in {lang}?",
            "What is '{text}' in {lang}?",
            "Please translate this to {lang}: {text}",
            "Can you translate '{text}' to {lang}?",
            "'{text}' in {lang}, please.",
            "Translate to {lang}: '{text}'",
            "I want to text a friend '{text}' in {lang}. How do I write it?",
            "What's the {lang} for '{text}'?",
            "Say '{text}' in {lang}.",
            "Help me translate '{text}' into {lang}.",
            "How do I write '{text}' in {lang}?",
            "{lang} translation of '{text}', please.",
            "Tell me how to say '{text}' in {lang}.",
            "Give me '{text}' in {lang}.",
            "Translate this into {lang}: '{text}'",
            "Please translate '{text}' to {lang}.",
            "What's '{text}' in {lang}?",
            "Can you put '{text}' into {lang}?",
            "How is '{text}' said in {lang}?",
            "Turn '{text}' into {lang}.",
            "I need the {lang} for '{text}'.",
            "Translate this sentence into {lang}: {text}",
        ],
    },
    "eval": {
        "zh": [
            "麻烦把“{text}”用{lang}表达出来",
            "“{text}”换成{lang}怎么写?",
            "“{text}”这句话译成{lang}该怎么讲?",
            "麻烦把“{text}”转成{lang}",
            "我想知道“{text}”的{lang}说法",
        ],
        "en": [
            "How would you put '{text}' in {lang}?",
            "Render this in {lang}, please: '{text}'",
            "Could you render '{text}' in {lang} for me?",
            "What would '{text}' be in {lang}?",
            "I need '{text}' translated to {lang}.",
        ],
    },
}

# --- parallel: two calls in one turn ---
PAR_WEATHER2_Q = {
    "train": {
        "zh": [
            "{a}和{b}的天气怎么样?",
            "帮我查一下{a}和{b}现在的天气。",
            "{a}、{b}今天天气如何?",
            "比较一下{a}和{b}的天气",
            "{a}天气怎么样?{b}呢?",
            "我在{a},朋友在{b},两边现在天气如何?",
            "查一下{a}的天气,再查一下{b}的。",
            "下周先去{a}再去{b},两个城市现在天气怎样?",
            "告诉我{a}和{b}的天气",
            "{a}跟{b}现在多少度?",
            "{a}与{b}今天天气",
            "我需要{a}和{b}两个城市的天气",
            "{a}现在天气如何,{b}又怎么样?",
            "请查询{a}和{b}的天气",
            "{a}和{b}哪里更暖和?帮我查查天气",
            "{a}、{b}两地天气怎么样?",
            "分别告诉我{a}和{b}的天气",
        ],
        "en": [
            "What's the weather in {a} and {b}?",
            "Check the weather for {a} and {b}.",
            "How's the weather in {a} and in {b} right now?",
            "Compare the weather in {a} and {b}.",
            "Weather in {a} and {b}?",
            "How's the weather in {a}? And what about {b}?",
            "I'm in {a} and my sister is in {b}. What's the weather like in both places?",
            "Tell me the weather in {a}, then in {b}.",
            "Going from {a} to {b} next week - what's the weather like in both cities now?",
            "Get me today's weather for {a} and for {b}.",
            "{a} and {b}: what's the weather?",
            "Is it hot in {a} and {b} today?",
            "Look up the weather in {a} as well as {b}.",
            "Please check the weather in {a} and {b}.",
            "Which is warmer right now, {a} or {b}?",
            "What's the weather doing in {a} and in {b}?",
            "Give me the weather for both {a} and {b}.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦分别查下{a}和{b}眼下的天气",
            "{a}那边天气怎样?{b}那边又如何?",
            "{a}和{b}两地现在天气分别怎样?",
            "同时帮我看看{a}、{b}的天气情况",
        ],
        "en": [
            "What are conditions like in {a} and {b} today?",
            "Can you see the weather for {a} along with {b}?",
            "Could you pull up the current weather for both {a} and {b}?",
            "I'm choosing between {a} and {b}; how's the weather in each?",
        ],
    },
}
PAR_WEATHER_EXCHANGE_Q = {
    "train": {
        "zh": [
            "{city}天气怎么样?另外{src}兑{dst}汇率是多少?",
            "帮我查下{city}的天气,还有{src}对{dst}的汇率。",
            "我要去{city},看看那边的天气和{src}换{dst}的汇率",
            "查{city}天气,顺便查{src}兑{dst}汇率",
            "下周去{city}旅游,那边天气如何?{src}换{dst}汇率多少?",
            "帮我查两样:{city}的天气;{src}兑{dst}的汇率。",
            "告诉我{city}现在的天气,还有{src}换{dst}的汇率是多少",
            "{city}今天天气好吗?还有,1{src}能换多少{dst}?",
            "我在{city}出差,那边天气怎样?顺便看看{src}对{dst}汇率",
            "{city}的天气和{src}兑{dst}的汇率,帮我都查一下。",
            "请查一下{city}的天气和{src}兑{dst}的汇率",
            "去{city}玩,想知道天气和{src}换{dst}的汇率",
            "{city}天气如何?{src}对{dst}汇率多少?",
            "帮我查{city}天气以及{src}兑{dst}汇率",
        ],
        "en": [
            "What's the weather in {city}, and what's the {src} to {dst} rate?",
            "Check {city}'s weather and the {src}/{dst} exchange rate.",
            "I'm flying to {city}: how's the weather, and how many {dst} is one {src}?",
            "Two things: the weather in {city} and the {src} to {dst} rate.",
            "How's the weather in {city}? Also, what's 1 {src} in {dst}?",
            "Weather in {city} plus the {src}/{dst} rate, please.",
            "On business in {city} - what's the weather, and the {src} to {dst} rate?",
            "Tell me the weather in {city} and how much one {src} is in {dst}.",
            "Check {city} weather, then the {src} to {dst} rate.",
            "I want {city}'s weather and the exchange rate from {src} to {dst}.",
            "Please check the weather in {city} and the {src} to {dst} rate.",
            "Going to {city}: what's the weather, and the {src}/{dst} exchange rate?",
            "Weather for {city}, and how much {dst} is one {src}?",
            "Look up {city}'s weather and the {src} to {dst} exchange rate.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦查下{city}眼下的天气,再看看{src}对{dst}的汇率",
            "去{city}之前,想了解那边天气和{src}兑换{dst}的价格",
            "出发去{city}前想知道两件事:当地天气,以及{src}兑{dst}的汇率",
        ],
        "en": [
            "Can you see the weather in {city} and also the going rate from {src} to {dst}?",
            "What are conditions like in {city}, and what does one {src} fetch in {dst}?",
            "Before my trip to {city}, tell me its weather and the {src}-{dst} exchange rate.",
        ],
    },
}
PAR_TIME2_Q = {
    "train": {
        "zh": [
            "{a}和{b}现在各是几点?",
            "帮我查一下{a}和{b}的当前时间。",
            "{a}几点了?{b}呢?",
            "{a}和{b}现在几点?",
            "我在{a},同事在{b},我们两边现在各几点?",
            "告诉我{a}和{b}的时间",
            "{a}、{b}两个地方现在分别几点?",
            "查查{a}现在的时间,还有{b}的",
            "要和{a}、{b}的客户开会,两边现在几点?",
            "现在{a}几点,{b}又是几点?",
            "{a}跟{b}的当前时间是?",
            "请告诉我{a}和{b}现在的时间",
            "{a}和{b}现在分别是几点?",
            "帮我查{a}、{b}的当地时间",
            "{a}几点?{b}几点?",
        ],
        "en": [
            "What time is it in {a} and {b}?",
            "Tell me the current time in {a} and in {b}.",
            "What's the time in {a}? And in {b}?",
            "Current time in {a} and {b}?",
            "I have colleagues in {a} and {b}. What time is it for each of them?",
            "Check the time in {a} and the time in {b}.",
            "{a} and {b}: what time is it there now?",
            "What time is it right now in {a}, and in {b}?",
            "Planning a call between {a} and {b}; what's the time in both places?",
            "Time in {a}? Time in {b}?",
            "Look up the current time for {a} and {b}.",
            "Please tell me the time in {a} and in {b}.",
            "What are the local times in {a} and {b}?",
            "Time in {a} and {b} right now?",
            "Find the current time for {a} and for {b}.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦分别报一下{a}和{b}眼下的时间",
            "{a}这会儿几点?{b}那边又是几点?",
            "我想同时知道{a}与{b}此刻的时间",
        ],
        "en": [
            "What hour is it in {a}, and what hour in {b}?",
            "Can you see the clocks in {a} and {b} for me?",
            "Could you give me the local times for {a} and {b}?",
        ],
    },
}
PAR_EXCHANGE2_Q = {
    "train": {
        "zh": [
            "{s1}兑{d1}和{s2}兑{d2}的汇率分别是多少?",
            "帮我查{s1}对{d1}、{s2}对{d2}的汇率。",
            "{s1}兑{d1}汇率多少?{s2}兑{d2}呢?",
            "查两个汇率:{s1}兑{d1},{s2}兑{d2}",
            "告诉我{s1}换{d1}和{s2}换{d2}的汇率",
            "我手上有{s1}和{s2},想分别换成{d1}和{d2},汇率各是多少?",
            "{s1}对{d1}、{s2}对{d2}现在汇率多少?",
            "先查{s1}兑{d1},再查{s2}兑{d2}的汇率",
            "1{s1}等于多少{d1}?1{s2}等于多少{d2}?",
            "汇率查询:{s1}→{d1}、{s2}→{d2}",
            "出国要换两种钱:{s1}换{d1},{s2}换{d2},汇率多少?",
            "请查{s1}兑{d1}和{s2}兑{d2}的汇率",
            "{s1}换{d1}、{s2}换{d2}各是多少?",
            "帮我看{s1}对{d1}以及{s2}对{d2}的汇率",
            "两个汇率:{s1}→{d1},{s2}→{d2}",
        ],
        "en": [
            "What are the {s1} to {d1} and {s2} to {d2} exchange rates?",
            "Check two rates for me: {s1}/{d1} and {s2}/{d2}.",
            "What's the {s1} to {d1} rate? And {s2} to {d2}?",
            "Exchange rates, two of them: {s1} -> {d1} and {s2} -> {d2}.",
            "Tell me the rates for {s1} to {d1} and for {s2} to {d2}.",
            "How many {d1} is 1 {s1}, and how many {d2} is 1 {s2}?",
            "Look up {s1}/{d1} and {s2}/{d2} for me.",
            "I hold some {s1} and some {s2}. What are the {s1} to {d1} and {s2} to {d2} rates?",
            "{s1} to {d1}, {s2} to {d2}: current rates?",
            "Two exchange rates: first {s1} to {d1}, then {s2} to {d2}.",
            "Rates for {s1}/{d1} plus {s2}/{d2}?",
            "Please check the {s1}/{d1} and {s2}/{d2} rates.",
            "What do {s1} to {d1} and {s2} to {d2} trade at?",
            "Find the exchange rates {s1} to {d1} and {s2} to {d2}.",
            "Rates please: {s1} to {d1}, then {s2} to {d2}.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦查查{s1}换{d1}与{s2}换{d2}眼下的价格",
            "{s1}对{d1}这会儿多少?{s2}对{d2}又是多少?",
            "请一起报一下{s1}兑{d1}以及{s2}兑{d2}的最新汇率",
        ],
        "en": [
            "What are the going rates for {s1} to {d1} and {s2} to {d2}?",
            "Can you see what one {s1} gets in {d1}, and one {s2} in {d2}?",
            "I need both the {s1}-{d1} rate and the {s2}-{d2} rate.",
        ],
    },
}
PAR_WEATHER_TIME_Q = {
    "train": {
        "zh": [
            "{place}现在几点?天气怎么样?",
            "帮我看看{place}的时间和天气。",
            "{place}现在的时间和天气是?",
            "告诉我{place}现在的时间和天气",
            "{place}现在几点,天气好不好?",
            "刚到{place},现在当地几点?天气怎么样?",
            "查一下{place}的时间,再看看天气",
            "{place}的当前时间和天气",
            "我要去{place}开会,那里现在几点?天气好吗?",
            "我需要{place}的时间跟天气",
            "{place}:几点了?天气咋样?",
            "请查{place}的时间和天气",
            "{place}现在几点?天气好吗?",
            "想知道{place}当地的时间和天气",
            "帮我看{place}几点了、天气怎样",
        ],
        "en": [
            "What time is it in {place}, and how's the weather there?",
            "Check the time and the weather in {place}.",
            "Time and weather in {place}?",
            "Tell me the time and weather in {place}.",
            "Just landed in {place}. What time is it, and what's the weather?",
            "What's the time in {place} now, and is it raining?",
            "{place}: time and weather, please.",
            "I'm calling my parents in {place}. What time is it there, and how's the weather?",
            "Check what time it is in {place} and how the weather looks.",
            "How late is it in {place}, and how's the weather?",
            "Current time and weather for {place}?",
            "Please check the time and weather in {place}.",
            "What's the local time and weather in {place}?",
            "Time plus weather for {place}, please.",
            "How's the weather in {place}, and what time is it?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦查下{place}眼下的时间和天气状况",
            "{place}这会儿几点钟,天气又怎样?",
            "我朋友在{place},那边此刻几点、天气如何?",
        ],
        "en": [
            "What hour is it in {place}, and what are conditions like?",
            "Can you see both the clock and the weather in {place}?",
            "My friend is in {place}; what's the local time and the weather there?",
        ],
    },
}

# --- chained: the second call uses the first result ---
CHAIN_FAHRENHEIT_Q = {
    "train": {
        "zh": [
            "{city}现在多少华氏度?",
            "{city}的气温换算成华氏度是多少?",
            "用华氏度说说{city}现在的温度",
            "{city}现在几华氏度?",
            "我朋友只看得懂华氏度,{city}现在是多少°F?",
            "告诉我{city}现在的温度,要华氏度",
            "{city}的温度用°F是多少?",
            "查一下{city}的气温,然后换成华氏度",
            "{city}今天华氏多少度?",
            "华氏度的话,{city}现在多热?",
            "把{city}现在的气温换算成华氏",
            "我习惯用华氏度,{city}现在几度?",
            "{city}气温(华氏)",
            "请用华氏度告诉我{city}的气温",
            "{city}现在的温度是多少华氏度?",
            "{city}气温换成°F是多少?",
            "查{city}温度并换算成华氏",
        ],
        "en": [
            "What's the temperature in {city} in Fahrenheit?",
            "How many degrees Fahrenheit is it in {city} now?",
            "Give me {city}'s current temperature in °F.",
            "{city} temperature in Fahrenheit?",
            "I only read Fahrenheit. What's the temperature in {city}?",
            "Look up {city}'s temperature and tell me in °F.",
            "What's {city} at in Fahrenheit today?",
            "Tell me the {city} temperature in degrees Fahrenheit.",
            "My American friend asks how hot it is in {city}, in °F.",
            "Fahrenheit reading for {city} right now?",
            "How hot is it in {city} in °F?",
            "{city} weather in Fahrenheit, please.",
            "I need {city}'s temperature in Fahrenheit.",
            "Please give me {city}'s temperature in Fahrenheit.",
            "What's {city} right now in degrees F?",
            "Tell me how warm {city} is, in °F.",
            "Check {city}'s temperature and convert it to Fahrenheit.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦把{city}眼下的气温用华氏度报给我",
            "{city}这会儿的温度折算为华氏是多少?",
            "{city}此刻的温度如果用华氏度表示是多少?",
            "想知道{city}现在的华氏温度",
        ],
        "en": [
            "What is {city}'s temperature on the Fahrenheit scale?",
            "Can you give {city}'s current reading in degrees F?",
            "Convert the current temperature in {city} to Fahrenheit for me.",
            "In Fahrenheit, how warm is {city} right now?",
        ],
    },
}
CHAIN_MONEY_Q = {
    "train": {
        "zh": [
            "{amount}{src}能换多少{dst}?",
            "{amount}{src}等于多少{dst}?",
            "我有{amount}{src},能兑换成多少{dst}?",
            "把{amount}{src}换成{dst}是多少?",
            "我要把{amount}{src}换成{dst},能拿到多少?",
            "{amount}{src}是多少{dst}?",
            "出国前想换钱:{amount}{src}换{dst}能换多少?",
            "告诉我{amount}{src}值多少{dst}",
            "{amount}{src}兑{dst}是多少钱?",
            "换{dst}的话,{amount}{src}能换多少?",
            "帮我算算{amount}{src}合多少{dst}",
            "{amount}{src}兑换成{dst}一共多少?",
            "想用{amount}{src}换{dst},能换多少?",
            "我需要把{amount}{src}换算成{dst}",
            "请帮我把{amount}{src}换成{dst}",
            "{amount}{src}能兑多少{dst}?",
            "算一下{amount}{src}等于多少{dst}",
            "用{amount}{src}可以换到多少{dst}?",
        ],
        "en": [
            "How much is {amount} {src} in {dst}?",
            "If I exchange {amount} {src}, how many {dst} do I get?",
            "Convert {amount} {src} to {dst}.",
            "What is {amount} {src} worth in {dst}?",
            "I want to change {amount} {src} into {dst}. How much will I get?",
            "{amount} {src} to {dst}?",
            "Tell me how much {amount} {src} is in {dst}.",
            "Before my trip I'm swapping {amount} {src} for {dst}; how much is that?",
            "What do I get in {dst} for {amount} {src}?",
            "Exchange {amount} {src} to {dst} for me.",
            "How many {dst} is {amount} {src}?",
            "My wallet has {amount} {src}; how many {dst} could I exchange it for?",
            "Work out {amount} {src} in {dst}.",
            "Please convert {amount} {src} into {dst}.",
            "How many {dst} will {amount} {src} buy?",
            "What's {amount} {src} in {dst} today?",
            "I'm exchanging {amount} {src} to {dst}; how much do I get?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦算算{amount}{src}眼下能换到多少{dst}",
            "{amount}{src}按这会儿的汇率值多少{dst}?",
            "手上有{amount}{src},按现在的汇率折算成{dst}是多少?",
            "{amount}{src}折合{dst}大概多少钱?",
        ],
        "en": [
            "What would {amount} {src} come to in {dst} right now?",
            "Can you work out how many {dst} I'd get for {amount} {src}?",
            "I'm carrying {amount} {src}; what's that in {dst} at today's rate?",
            "Roughly how many {dst} would {amount} {src} fetch?",
        ],
    },
}
CHAIN_PRICE_Q = {
    "train": {
        "zh": [
            "一件商品{price}{src},买{n}件一共多少{dst}?",
            "每张票{price}{src},{n}张合多少{dst}?",
            "单价{price}{src},买{n}个要花多少{dst}?",
            "一杯咖啡{price}{src},{n}杯合多少{dst}?",
            "每个耳机{price}{src},买{n}个换成{dst}一共多少?",
            "{n}张门票,每张{price}{src},合计多少{dst}?",
            "网上一件衣服{price}{src},买{n}件要付多少{dst}?",
            "单价{price}{src},数量{n},总价换成{dst}是多少?",
            "酒店一晚{price}{src},住{n}晚一共多少{dst}?",
            "帮我算{n}件{price}{src}的东西值多少{dst}",
            "每人{price}{src},{n}个人一共多少{dst}?",
            "{price}{src}一个,要{n}个,换成{dst}多少?",
            "每件{price}{src},买{n}件共多少{dst}?",
            "{n}个东西,单价{price}{src},换成{dst}多少钱?",
            "一张{price}{src},{n}张一共多少{dst}?",
            "买{n}件{price}{src}的商品要多少{dst}?",
        ],
        "en": [
            "One item costs {price} {src}. How much are {n} of them in {dst}?",
            "A ticket is {price} {src}; what do {n} tickets cost in {dst}?",
            "I want {n} pieces at {price} {src} each. What's the total in {dst}?",
            "A coffee costs {price} {src}. What do {n} coffees cost in {dst}?",
            "The hotel is {price} {src} per night. How much is {n} nights in {dst}?",
            "{n} tickets, {price} {src} each: total in {dst}?",
            "Unit price {price} {src}, quantity {n}. What's the total in {dst}?",
            "I'm ordering {n} shirts that cost {price} {src} each. What do I pay in {dst}?",
            "Each person pays {price} {src}. For {n} people, what's the total in {dst}?",
            "How much do {n} items at {price} {src} cost in {dst}?",
            "If one costs {price} {src}, how many {dst} for {n}?",
            "Price is {price} {src} per unit and I need {n} units. Total in {dst}?",
            "Each costs {price} {src}; what do {n} cost in {dst}?",
            "{n} items at {price} {src} each, total in {dst}?",
            "What's the {dst} total for {n} tickets at {price} {src}?",
            "Buying {n} at {price} {src} apiece: how much in {dst}?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦算下{n}样东西、每样{price}{src},一共折合多少{dst}",
            "买{n}份单价{price}{src}的商品,换算为{dst}是多少?",
            "{n}份午餐,每份{price}{src},总共折合多少{dst}?",
        ],
        "en": [
            "What do {n} things priced at {price} {src} each come to in {dst}?",
            "Can you total {n} units at {price} {src} and give it in {dst}?",
            "{n} books at {price} {src} apiece: how much is that altogether in {dst}?",
        ],
    },
}
CHAIN_TOTAL_Q = {
    "train": {
        "zh": [
            "{n}个{q}{src}加起来是多少{dst}?",
            "{q}{src}的{n}倍是多少{dst}?",
            "一共{n}份,每份{q}{src},合计多少{dst}?",
            "每天{q}{src},连续{n}天,总量是多少{dst}?",
            "{n}次,每次{q}{src},一共多少{dst}?",
            "先算{n}乘{q}{src},再换成{dst}",
            "告诉我{n}个{q}{src}总共是多少{dst}",
            "{q}{src}×{n}等于多少{dst}?",
            "总共{n}个,每个{q}{src},用{dst}算是多少?",
            "{n}组,每组{q}{src},合多少{dst}?",
            "每份{q}{src},一共{n}份,合多少{dst}?",
            "{n}乘{q}{src}换成{dst}是多少?",
            "把{n}个{q}{src}加起来换算成{dst}",
            "{q}{src}共{n}次,总共多少{dst}?",
        ],
        "en": [
            "What is {n} times {q} {src} in {dst}?",
            "{n} pieces of {q} {src} each: how many {dst} in total?",
            "Add up {n} lots of {q} {src} and give the total in {dst}.",
            "{q} {src} a day for {n} days: how many {dst} is that?",
            "I have {n} parts of {q} {src} each. Total in {dst}?",
            "{n} rounds of {q} {src}: what's the total in {dst}?",
            "How many {dst} are {n} lots of {q} {src}?",
            "Tell me the total in {dst} for {n} items of {q} {src} each.",
            "What's {q} {src} times {n}, in {dst}?",
            "Sum {n} batches of {q} {src} and give me {dst}.",
            "{n} times {q} {src} equals how many {dst}?",
            "{n} lots of {q} {src}: total in {dst}?",
            "Multiply {q} {src} by {n} and convert to {dst}.",
            "What's the total of {n} x {q} {src} in {dst}?",
            "I have {n} portions of {q} {src} each. How many {dst} altogether?",
        ],
    },
    "eval": {
        "zh": [
            "麻烦把{n}份{q}{src}合计后折算为{dst}",
            "{q}{src}一份,共{n}份,等同于多少{dst}?",
            "{q}{src}乘以{n}以后,换算成{dst}是多少?",
        ],
        "en": [
            "What do {n} portions of {q} {src} make in {dst}?",
            "Can you multiply {q} {src} by {n} and give the result in {dst}?",
            "Take {q} {src}, multiply it by {n}, and express the total in {dst}.",
        ],
    },
}

# convert a quantity, then work on the result (--chain_shapes): {then} is one of THEN_OPS' phrases
CHAIN_CONVERT_Q = {
    "train": {
        "zh": [
            "把{v}{src}换算成{dst},然后{then}",
            "{v}{src}先换成{dst},再{then}",
            "先把{v}{src}转成{dst},得数{then}",
            "{v}{src}等于多少{dst}?算出来以后{then}",
            "帮我把{v}{src}换成{dst},结果{then}",
            "{v}{src}折合成{dst},接着{then}",
            "请先换算{v}{src}为{dst},之后{then}",
            "算一下{v}{src}是多少{dst},然后把它{then}",
            "{v}{src}换成{dst}以后再{then},是多少?",
            "第一步把{v}{src}转换成{dst},第二步{then}",
        ],
        "en": [
            "Convert {v} {src} to {dst}, then {then}.",
            "Turn {v} {src} into {dst} and {then}.",
            "First change {v} {src} to {dst}; after that, {then}.",
            "How many {dst} is {v} {src}? Once you have it, {then}.",
            "Take {v} {src} in {dst} and {then}.",
            "Change {v} {src} into {dst}, and then {then}.",
            "Work out {v} {src} in {dst}, then {then}.",
            "Please express {v} {src} in {dst} and {then}.",
            "{v} {src} to {dst}, then {then}?",
            "Step one: {v} {src} in {dst}. Step two: {then}.",
        ],
    },
    "eval": {"zh": [], "en": []},
}
THEN_OPS = {  # (phrase, operator, the number it brings; None: 2)
    "zh": [("乘以{k}", "*", True), ("再乘{k}", "*", True), ("加上{k}", "+", True), ("再加{k}", "+", True),
           ("减去{k}", "-", True), ("除以{k}", "/", True), ("平均分成{k}份", "/", True), ("翻一倍", "*", None),
           ("乘以二", "*", None), ("取一半", "/", None)],
    "en": [("multiply it by {k}", "*", True), ("times the result by {k}", "*", True),
           ("add {k} to it", "+", True), ("add {k}", "+", True), ("subtract {k}", "-", True),
           ("take {k} off", "-", True), ("divide it by {k}", "/", True), ("split it {k} ways", "/", True),
           ("double it", "*", None), ("halve it", "/", None), ("give me twice that", "*", None)],
}
# what joins two requests asked in one message (--parallel_shapes): "", the second simply follows
PARALLEL_JOINS = {
    "zh": ["另外,", "还有,", "顺便问一下,", "同时,", "", "再问个事,", "以及,"],
    "en": ["Also, ", "And ", "Plus, ", "One more thing: ", "", "Oh and ", "While you're at it, "],
}
# an amount exchanged, then shared out (--chain_shapes)
CHAIN_SPLIT_Q = {
    "train": {
        "zh": [
            "{amount}{src}换成{dst},{n}个人平分,每人多少?",
            "我们{n}个人一共带了{amount}{src},换成{dst}后每人能分到多少?",
            "把{amount}{src}兑换成{dst}再平均分给{n}个人",
            "{amount}{src}按汇率换成{dst},分成{n}份每份多少?",
            "{n}个朋友AA,总共{amount}{src},每人付多少{dst}?",
            "团费{amount}{src},{n}人均摊,折合每人多少{dst}?",
            "换算一下:{amount}{src}合多少{dst},再除以{n}个人",
            "{amount}{src}的账单{n}个人分,每人多少{dst}?",
            "先把{amount}{src}换成{dst},然后{n}个人均分",
            "房租{amount}{src},{n}个室友平摊,每人合多少{dst}?",
        ],
        "en": [
            "Split {amount} {src} between {n} people: how much is each share in {dst}?",
            "We owe {amount} {src} in total and there are {n} of us. What does each pay in {dst}?",
            "Convert {amount} {src} to {dst} and divide it among {n} people.",
            "A bill of {amount} {src} shared by {n}: each person's part in {dst}?",
            "{amount} {src} split {n} ways, in {dst} per person?",
            "The rent is {amount} {src} for {n} flatmates. How many {dst} each?",
            "Change {amount} {src} into {dst}, then share it equally among {n}.",
            "How much {dst} does each of {n} friends get from {amount} {src}?",
            "Our group of {n} spent {amount} {src}; per head, what is that in {dst}?",
            "Divide {amount} {src} by {n} people and give each share in {dst}.",
        ],
    },
    "eval": {"zh": [], "en": []},
}
CHAIN_CONVERT_A = {
    "zh": ["{v}{src}约为{first}{dst},接着算得{result}。", "先换算:{v}{src} = {first}{dst};再算得{result}。"],
    "en": ["{v} {src} is {first} {dst}; with that, the result is {result}.",
           "{v} {src} = {first} {dst}, and after that step it comes to {result}."],
}
CHAIN_SPLIT_A = {
    "zh": ["按汇率{rate},{amount}{src}由{n}人平分,每人约{total}{dst}。",
           "每人约{total}{dst}(汇率{rate})。"],
    "en": ["At a rate of {rate}, each of the {n} shares is about {total} {dst}.",
           "About {total} {dst} per person (rate {rate})."],
}

# --- correction: the first call fails with a hint ---
CORR_WEATHER_Q = {
    "train": {
        "zh": [
            "{place}今天天气怎么样?",
            "{place}现在天气如何?",
            "查一下{place}的天气",
            "{place}冷吗?",
            "{place}天气咋样?",
            "{place}下雨了吗?",
            "告诉我{place}的天气",
            "{place}多少度?",
            "明天要去{place}办事,那边天气如何?",
            "看下{place}的天气",
            "{place}的天气",
            "查查{place}现在多少度",
            "{place}今天热吗?",
            "请查询{place}的天气",
            "{place}今天天气好吗?",
            "{place}那边天气怎样",
            "帮忙看下{place}的天气",
        ],
        "en": [
            "What's the weather in {place}?",
            "How's the weather in {place} today?",
            "Weather in {place}, please.",
            "Is it raining in {place}?",
            "Tell me the weather in {place}.",
            "How hot is it in {place} today?",
            "{place} weather?",
            "Heading to {place} tomorrow; what's the weather there?",
            "Check the weather in {place}.",
            "What's the temperature in {place}?",
            "Is it cold in {place}?",
            "Weather for {place}?",
            "Look up the weather in {place} for me.",
            "Please check the weather in {place}.",
            "Any rain in {place} right now?",
            "Current weather in {place}?",
            "Find out the weather in {place} for me.",
        ],
    },
    "eval": {
        "zh": [
            "麻烦查下{place}眼下的天气",
            "{place}这会儿天气怎样?",
            "{place}那一带现在天气怎样?",
            "我在{place},外面天气如何?",
        ],
        "en": [
            "How's it looking weather-wise in {place}?",
            "Weather conditions in {place} at present?",
            "What are conditions like in {place} today?",
            "Can you see what the weather is around {place}?",
            "I'm staying in {place}; what's it like outside?",
            "Could you check the weather around {place}?",
        ],
    },
}
CORR_MATH_Q = {
    "train": {
        "zh": [
            "帮我算一下 {expr}",
            "{expr} 等于几?",
            "算算{expr}",
            "{expr}是多少?",
            "帮忙计算 {expr}",
            "{expr} 的结果是多少?",
            "{expr}=?",
            "告诉我 {expr} 等于多少",
            "做题:{expr}",
            "请算出 {expr}",
            "{expr} 结果多少?",
            "快帮我算 {expr}",
            "算一下{expr}",
            "请帮我算 {expr}",
            "{expr} 的答案是?",
            "能算下 {expr} 吗?",
            "求 {expr}",
        ],
        "en": [
            "What is {expr}?",
            "Calculate {expr} please.",
            "Work out {expr}.",
            "{expr} equals?",
            "Compute {expr}.",
            "What's {expr}?",
            "Solve {expr} for me.",
            "Tell me the result of {expr}.",
            "{expr} = ?",
            "Math check: {expr}",
            "How much is {expr}?",
            "Quick math: {expr}",
            "Help me calculate {expr}.",
            "Please compute {expr}.",
            "Could you calculate {expr}, please?",
            "What does {expr} come out to?",
            "Find {expr}.",
        ],
    },
    "eval": {
        "zh": ["麻烦求一下 {expr}", "{expr} 算出来是多少?", "请问 {expr} 的积是多少?", "{expr} 帮忙算下"],
        "en": [
            "What number do you get from {expr}?",
            "Can you work out {expr} for me?",
            "Could you multiply this out: {expr}?",
            "What does {expr} give?",
        ],
    },
}

# --- no_tool: train (question, answer) pairs of three kinds; eval has questions only (held-out phrasings) ---
# greetings, thanks and small talk: used as they are (no opener or closer is added)
NO_TOOL_CHAT = {
    "zh": [
        ("你好", "你好!有什么可以帮你的吗?"),
        ("你好呀,今天过得怎么样?", "我很好,谢谢关心!有什么需要帮忙的吗?"),
        ("谢谢你!", "不客气,很高兴能帮到你!"),
        ("早上好", "早上好!祝你今天一切顺利。"),
        ("晚安", "晚安,祝你好梦!"),
        ("我今天有点累", "辛苦了,记得好好休息,放松一下。"),
        ("再见", "再见,有需要随时找我!"),
        ("好的,明白了", "好的,还有其他问题随时问我。"),
        ("太棒了!", "很高兴你满意!还需要什么帮助吗?"),
        ("哈哈,你真有意思", "谢谢夸奖!有什么想聊的尽管说。"),
        ("我心情不太好", "抱抱你,愿意的话可以跟我说说发生了什么。"),
        ("没事了", "好的,有需要再找我。"),
        ("我今天考试通过了!", "恭喜你!努力有了回报,好好庆祝一下吧。"),
        ("你真聪明", "谢谢夸奖!我会继续努力帮你的。"),
    ],
    "en": [
        ("Hello!", "Hello! How can I help you today?"),
        ("Hi there, how are you?", "I'm doing well, thanks! What can I do for you?"),
        ("Thank you so much!", "You're welcome! Happy to help."),
        ("Good morning!", "Good morning! I hope you have a great day."),
        ("Good night!", "Good night, sleep well!"),
        ("I'm feeling a bit tired today.", "Take it easy and get some rest; you deserve it."),
        ("Goodbye!", "Goodbye! Come back any time."),
        ("OK, got it.", "Great! Let me know if you need anything else."),
        ("Awesome!", "Glad you like it! Anything else I can do?"),
        ("Haha, that's hilarious.", "Glad you liked it! Happy to keep you entertained."),
        ("I'm in a bad mood.", "Sorry to hear that. Want to talk about what happened?"),
        ("Never mind.", "No problem. I'm here if you need me."),
        ("I passed my exam today!", "Congratulations! Your hard work paid off."),
        ("You're so smart.", "Thank you! I'm glad I could help."),
    ],
}
# more small talk, a kind of its own: the seen-phrasing set samples the kinds it was first made from
NO_TOOL_SMALLTALK = {
    "zh": [
        ("对不起,刚才说错了", "没关系,请告诉我正确的意思就好。"),
        ("我好无聊啊", "要不要聊聊天?我也可以给你推荐点有趣的事做。"),
        ("周末快乐!", "周末快乐!好好放松一下吧。"),
        ("你辛苦了", "不辛苦,能帮到你我很开心!"),
        ("我饿了", "那就去吃点好吃的吧,别饿着自己。"),
        ("感谢你的耐心", "不用客气,随时为你服务。"),
        ("你觉得我该早点睡吗?", "早点睡对身体好,建议别熬夜。"),
        ("今天真开心", "太好了!开心的日子值得记住。"),
        ("我回来了", "欢迎回来!有什么需要我帮忙的吗?"),
        ("你在干嘛呢?", "我在这儿等你提问呢,有什么想聊的?"),
    ],
    "en": [
        ("Sorry, I made a mistake just now.", "No worries. Just tell me what you meant."),
        ("I'm so bored.", "Want to chat? I can also suggest something fun to do."),
        ("Happy weekend!", "Happy weekend! Enjoy the time off."),
        ("You've been a big help.", "Glad to hear it! I'm here whenever you need me."),
        ("I'm hungry.", "Time for a snack, then. Don't skip your meal."),
        ("I appreciate your patience.", "No problem at all. Take your time."),
        ("Should I go to bed early?", "Getting enough sleep is good for you, so yes, if you can."),
        ("What a great day!", "That's wonderful! Enjoy it."),
        ("I'm back.", "Welcome back! What can I do for you?"),
        ("What are you up to?", "Just waiting for your questions. What would you like to talk about?"),
    ],
}
# questions and requests on any topic: identity, definitions, advice, writing, opinions, facts
NO_TOOL_ASK = {
    "zh": [
        ("你是谁?", "我是 MiniMind,一个AI助手,可以回答问题,也能调用工具查天气、时间和汇率。"),
        ("你能做什么?", "我可以聊天、回答问题,还能调用工具查天气、时间、汇率,做计算、单位换算和翻译。"),
        ("什么是机器学习?", "机器学习是让计算机从数据中自动学习规律的方法,而不是靠人手写规则。"),
        ("什么是人工智能?", "人工智能是让机器具备感知、推理和学习等能力的技术。"),
        ("给我讲个笑话吧", "程序员最怕什么?需求又改了!"),
        ("帮我写一句生日祝福", "祝你生日快乐,天天开心,万事如意!"),
        ("写一句新年祝福", "祝你新年快乐,身体健康,心想事成!"),
        ("推荐一本书吧", "推荐《三体》,一部很精彩的科幻小说。"),
        ("什么是Python?", "Python 是一种简单易学、用途广泛的编程语言。"),
        ("什么是自然语言处理?", "自然语言处理是让计算机理解和生成人类语言的技术。"),
        ("什么是云计算?", "云计算是通过网络按需使用服务器、存储等计算资源的方式。"),
        ("什么是大语言模型?", "大语言模型是用海量文本训练的神经网络,能理解和生成文字。"),
        ("什么是光合作用?", "光合作用是植物利用阳光把二氧化碳和水变成有机物并放出氧气的过程。"),
        ("一年有几个季节?", "一年有四个季节:春、夏、秋、冬。"),
        ("一周有几天?", "一周有七天。"),
        ("一小时有多少分钟?", "一小时有60分钟。"),
        ("中国的首都是哪里?", "中国的首都是北京。"),
        ("东京是哪个国家的首都?", "东京是日本的首都。"),
        ("怎样才能睡得更好?", "保持规律作息,睡前少看手机,不喝咖啡,让卧室安静又暗一些。"),
        ("怎么提高学习效率?", "可以先定好计划,专注一段时间后休息一下,并及时复习。"),
        ("多喝水有什么好处?", "多喝水能促进新陈代谢、保持皮肤水润,也有助于集中注意力。"),
        ("给我讲个小故事", "从前有只小兔子,每天坚持练习跳远,最后成了森林里跳得最远的动物。"),
        ("写一首关于春天的短诗", "春风拂柳绿,细雨润花开。燕子归来早,处处好景来。"),
        ("帮我想一个咖啡店的名字", "可以叫“慢时光咖啡”,听起来温暖又放松。"),
        ("你喜欢什么颜色?", "我没有真正的喜好,不过很多人喜欢蓝色,因为它让人觉得平静。"),
        ("养猫好还是养狗好?", "各有优点:猫比较独立,狗更黏人、需要更多陪伴,看你的生活习惯。"),
        ("你觉得读书有用吗?", "当然有用,读书能开阔视野,帮助我们更好地思考。"),
        ("彩虹是怎么形成的?", "阳光穿过空气中的小水滴时发生折射和反射,就形成了彩虹。"),
        ("为什么天空是蓝色的?", "空气会散射阳光,蓝光散射得最多,所以天空看起来是蓝色的。"),
        ("米饭怎么煮?", "米洗净后加水,水比米高出约一个指节,用电饭锅煮二十分钟左右就好。"),
        ("给我一个锻炼身体的建议", "每周运动三到五次,每次半小时左右,比如快走、慢跑或游泳。"),
        ("用三个词形容秋天", "金黄、凉爽、丰收。"),
        ("什么是编程?", "编程就是用编程语言写出指令,让计算机按步骤完成任务。"),
        ("你是机器人吗?", "我是一个AI助手,不是实体机器人,但可以和你聊天、帮你查信息。"),
        ("你是怎么训练出来的?", "我是在大量文本和对话数据上训练出来的一个小型语言模型。"),
        ("帮我想一句鼓励自己的话", "每一天的努力,都会让明天的你更好!"),
        ("推荐一道家常菜", "推荐番茄炒蛋,做法简单,酸甜可口。"),
        ("怎么学好英语?", "多听多说,每天坚持背单词、读文章,多找机会用英语交流。"),
        ("一公斤等于多少克?", "一公斤等于1000克。"),
    ],
    "en": [
        (
            "Who are you?",
            "I'm MiniMind, an AI assistant. I can answer questions and use tools for weather,"
            " time and exchange rates.",
        ),
        (
            "What can you do?",
            "I can chat, answer questions, and use tools to check weather, time and "
            "exchange rates, do math, convert units and translate.",
        ),
        (
            "What is machine learning?",
            "Machine learning lets computers learn patterns from data instead "
            "of following hand-written rules.",
        ),
        (
            "What is a neural network?",
            "A neural network is a model made of layers of simple units that " "learn from data.",
        ),
        ("Tell me a joke.", "Why did the computer go to the doctor? It had a virus!"),
        ("Write a one-sentence birthday wish.", "Happy birthday, may your year be full of joy!"),
        ("Recommend a book to read.", "Try 'The Three-Body Problem', a gripping science fiction novel."),
        ("What is Python?", "Python is an easy-to-learn, widely used programming language."),
        (
            "What is natural language processing?",
            "It is the field that teaches computers to understand " "and produce human language.",
        ),
        ("What is cloud computing?", "Using servers, storage and software over the internet, on demand."),
        (
            "What is a large language model?",
            "A neural network trained on huge amounts of text to " "understand and generate language.",
        ),
        (
            "What is photosynthesis?",
            "It is how plants use sunlight to turn carbon dioxide and water into " "sugar and oxygen.",
        ),
        ("How many days are in a week?", "There are seven days in a week."),
        ("How many minutes are in an hour?", "There are 60 minutes in an hour."),
        ("What is the capital of France?", "The capital of France is Paris."),
        ("Which country is Sydney in?", "Sydney is in Australia."),
        (
            "How can I sleep better?",
            "Keep a regular schedule, avoid screens and caffeine before bed, and "
            "keep your room dark and quiet.",
        ),
        (
            "How do I stay focused while studying?",
            "Work in short focused blocks, put your phone away, and " "take small breaks in between.",
        ),
        (
            "Why is the sky blue?",
            "Air scatters sunlight, and blue light scatters the most, so the sky " "looks blue.",
        ),
        (
            "How does a rainbow form?",
            "Sunlight is bent and reflected inside raindrops and splits into " "colors.",
        ),
        (
            "Tell me a short story.",
            "A little turtle entered a race everyone thought he'd lose. He kept "
            "going, step by step, and crossed the finish line proud.",
        ),
        (
            "Write a short poem about the sea.",
            "Blue waves roll in, soft and slow; the sea hums songs that " "sailors know.",
        ),
        ("Suggest a name for a bakery.", "How about 'Golden Crust'? It sounds warm and inviting."),
        (
            "What's your favorite color?",
            "I don't have real preferences, but many people like blue because " "it feels calm.",
        ),
        (
            "Are cats or dogs better pets?",
            "Both are great: cats are more independent, while dogs need " "more attention and love company.",
        ),
        ("Is reading every day worth it?", "Yes, daily reading builds knowledge, vocabulary and focus."),
        (
            "How do I cook rice?",
            "Rinse the rice, add about one and a half cups of water per cup, then "
            "simmer covered for about 15 minutes.",
        ),
        (
            "Give me a tip for staying healthy.",
            "Move a bit every day, sleep enough, and eat plenty of " "vegetables.",
        ),
        ("Describe autumn in three words.", "Golden, crisp, cozy."),
        (
            "What is programming?",
            "Programming is writing instructions that a computer can follow to " "complete tasks.",
        ),
        (
            "Are you a robot?",
            "I'm an AI assistant, not a physical robot, but I can chat and look things " "up for you.",
        ),
        ("How were you trained?", "I'm a small language model trained on text and conversation data."),
        ("Give me a motivational quote.", "Small steps every day add up to big results."),
        ("Write one line to cheer someone up.", "Hang in there, brighter days are coming!"),
        ("Suggest a simple dinner idea.", "Try a vegetable stir-fry with rice: quick, healthy and tasty."),
        (
            "How can I get better at English?",
            "Read and listen a little every day, learn words in context, " "and speak as often as you can.",
        ),
        ("How many grams are in a kilogram?", "There are 1000 grams in a kilogram."),
    ],
}
# hard negatives: they name a tool or its subject but need no call; that tool is always offered
NO_TOOL_HARD = {
    "zh": [
        ("你能查天气吗?", "可以,告诉我城市名,我就帮你查当前天气。", "weather"),
        ("你会翻译吗?", "会的,把要翻译的句子和目标语言告诉我就行。", "translate"),
        ("你能帮我算数学题吗?", "可以,把算式发给我,我来帮你计算。", "math"),
        ("你会查时间吗?", "会的,告诉我城市或时区,我就能查到那里的当前时间。", "time"),
        ("你能查汇率吗?", "可以,告诉我要查哪两种货币,我来帮你查。", "rate"),
        ("你有哪些工具?", "我可以查天气、查时间、查汇率,还能做数学计算、单位换算和翻译。", "all"),
        ("汇率是什么意思?", "汇率是两种货币之间兑换的比例,比如1美元能换多少人民币。", "rate"),
        ("天气预报准吗?", "短期的天气预报通常比较准,预报的时间越远,误差越大。", "weather"),
        ("时区是什么?", "时区是按经度划分的区域,同一时区使用相同的标准时间。", "time"),
        (
            "华氏度和摄氏度有什么区别?",
            "两者都是温度单位:水在0摄氏度结冰,对应32华氏度;美国常用华氏度。",
            "unit",
        ),
        ("英里和公里哪个长?", "英里更长,1英里大约是1.6公里。", "unit"),
        (
            "怎么在心里快速换算单位?",
            "记住几个常用比例就行,比如1英里约1.6公里、1公斤约2.2磅,再做近似计算。",
            "unit",
        ),
        ("计算器怎么用?", "输入数字和运算符,再按等号,就能得到结果。", "math"),
        ("学外语有什么好方法?", "每天坚持一点,多听多读,大胆开口,把新词用到句子里。", "translate"),
        ("为什么会有时差?", "因为地球自转,不同经度的地方迎来太阳的时间不同,所以各地时间不一样。", "time"),
        ("人民币是哪个国家的货币?", "人民币是中国的法定货币。", "rate"),
        ("下雨天适合做什么?", "可以在家看书、听音乐、看电影,或者做一顿热乎的饭。", "weather"),
        ("翻译软件靠谱吗?", "日常用语一般翻得不错,但专业或文学内容最好再人工检查一下。", "translate"),
        ("什么是单位换算?", "单位换算就是把一个量从一种单位换成另一种单位,比如把公里换成英里。", "unit"),
    ],
    "en": [
        (
            "Can you check the weather?",
            "Yes. Just tell me which city, and I'll look up the current " "weather.",
            "weather",
        ),
        (
            "Do you know how to translate?",
            "Yes, I can translate between Chinese and English. Send me the " "text and the target language.",
            "translate",
        ),
        (
            "Can you help with math problems?",
            "Sure, send me the expression and I'll calculate " "it.",
            "math",
        ),
        (
            "Are you able to look up times in other cities?",
            "Yes, tell me a city or time zone and " "I'll look up its current time.",
            "time",
        ),
        ("Do you do currency rates?", "Yes, name the two currencies and I'll look up the rate.", "rate"),
        (
            "What tools do you have?",
            "I can check weather, time and exchange rates, do math, convert units " "and translate text.",
            "all",
        ),
        (
            "What does exchange rate mean?",
            "It is the price of one currency in another, like how many yuan " "one US dollar buys.",
            "rate",
        ),
        ("What is a kilometer?", "A kilometer is a unit of length equal to 1000 meters.", "unit"),
        (
            "How do I convert units in my head?",
            "Remember a few ratios, like 1 mile is about 1.6 km and 1 " "kg is about 2.2 pounds, then round.",
            "unit",
        ),
        (
            "What is a time zone?",
            "A region that shares the same standard time, usually set by " "longitude.",
            "time",
        ),
        (
            "Why is it night in New York when it's day in Beijing?",
            "Because the Earth rotates, so places " "on opposite sides face the sun at " "different times.",
            "time",
        ),
        (
            "Is Fahrenheit or Celsius more common?",
            "Most countries use Celsius; the United States mainly " "uses Fahrenheit.",
            "unit",
        ),
        (
            "How accurate are weather forecasts?",
            "They are usually good for the next few days and less " "reliable further out.",
            "weather",
        ),
        ("Which currency does Japan use?", "Japan uses the yen.", "rate"),
        (
            "What's a good way to learn a new language?",
            "Practice a little every day, listen to native " "speakers, and start speaking early.",
            "translate",
        ),
        (
            "What should I do on a rainy day?",
            "Read a book, watch a film, cook something warm, or call a " "friend.",
            "weather",
        ),
        (
            "Are translation apps reliable?",
            "They're fine for everyday phrases, but have a person check " "important or technical text.",
            "translate",
        ),
        (
            "What is a calculator for?",
            "A calculator does arithmetic quickly, from sums to " "percentages.",
            "math",
        ),
    ],
}

# topic questions: a template around a topic, answered by the topic's line ("" or the tool topic it is about:
# that tool is always offered). The templates are carved like the others (every RL_EVERY-th is RL's), so an RL
# question never has an SFT wording; the eval set has its own templates and topics (above), none of them here.
NO_TOOL_TOPIC_TEMPLATES = {
    "zh": [
        "什么是{topic}?",
        "介绍一下{topic}",
        "{topic}是什么?",
        "说说{topic}吧",
        "跟我聊聊{topic}",
        "我想了解{topic}",
        "帮我理解一下{topic}",
        "关于{topic},你知道些什么?",
        "用几句话描述{topic}",
        "你了解{topic}吗?",
        "请解释一下{topic}",
        "{topic}有什么特点?",
        "谈谈{topic}",
        "我对{topic}很好奇",
        "能介绍下{topic}吗?",
        "解释一下{topic}",
        "能解释下{topic}吗?",
        "可以介绍一下{topic}吗?",
        "{topic}是什么意思?",
        "请讲讲{topic}",
        "给我讲讲{topic}吧",
        "{topic}是指什么?",
        "帮我讲解一下{topic}",
        "你能说明一下{topic}吗?",
        "{topic}是啥?",
        "我不太懂{topic},能讲讲吗?",
        "想听你聊一聊{topic}",
        "描述一下{topic}吧",
        "{topic}怎么理解?",
        "关于{topic}能多说几句吗?",
        "我想知道{topic}是什么",
        "麻烦讲解一下{topic}",
        "{topic}有哪些知识?",
        "教教我{topic}",
        "请给我解释{topic}",
    ],
    "en": [
        "Tell me about {topic}.",
        "What do you know about {topic}?",
        "I'm curious about {topic}.",
        "Help me understand {topic}.",
        "Could you say a few words about {topic}?",
        "Teach me the basics of {topic}.",
        "Give me an overview of {topic}.",
        "I'd like to learn about {topic}.",
        "Describe {topic} in a couple of sentences.",
        "Talk to me about {topic}.",
        "Share a fact about {topic}.",
        "Write a few lines on {topic}.",
        "Summarize {topic} for me.",
        "Fill me in on {topic}.",
        "Do you know anything about {topic}?",
        "Explain {topic}.",
        "Could you explain {topic} to me?",
        "Please describe {topic}.",
        "What is {topic}, briefly?",
        "Walk me through {topic}.",
        "Break down {topic} for me.",
        "How does {topic} work?",
        "I'd love a quick explanation of {topic}.",
        "Can you describe {topic}?",
        "What can you tell me about {topic}?",
        "Outline {topic} for a beginner.",
        "Say something about {topic}.",
        "Give me the basics of {topic}.",
        "I don't get {topic}. Help?",
        "Quick question: what is {topic}?",
        "Could you clarify {topic} for me?",
        "Explain {topic} like I'm new to it.",
        "What's {topic} all about?",
        "Please tell me a little about {topic}.",
        "Can you teach me about {topic}?",
    ],
}
NO_TOOL_TOPICS = {
    "zh": [
        ("湿度", "湿度表示空气中水汽的多少,湿度高的时候人会觉得闷。", "weather"),
        ("气压", "气压是大气对地面的压力,气压下降常常预示着要变天。", "weather"),
        ("台风", "台风是在热带海洋上形成的强烈气旋,会带来大风和暴雨。", "weather"),
        ("紫外线", "紫外线是阳光中看不见的一部分,照射过量会晒伤皮肤。", "weather"),
        ("梅雨", "梅雨是初夏长江中下游一带持续阴雨的天气,正赶上梅子成熟。", "weather"),
        ("雾霾", "雾霾是雾和空气中的细颗粒物混在一起的现象,会降低能见度、影响健康。", "weather"),
        ("夏令时", "夏令时是夏天把时钟拨快一小时的做法,为的是多利用白天的阳光。", "time"),
        ("格林尼治时间", "格林尼治时间以英国格林尼治天文台为基准,曾经是世界的标准时间。", "time"),
        ("原子钟", "原子钟靠原子振动的频率计时,非常精确,几百万年才差一秒。", "time"),
        ("日晷", "日晷是古代的计时工具,靠太阳投下的影子指示时刻。", "time"),
        ("人民币", "人民币是中国的法定货币,单位是元,一元等于十角。", "rate"),
        ("欧元", "欧元是欧盟多数国家共同使用的货币。", "rate"),
        ("美元", "美元是美国的货币,也是国际贸易中用得最多的货币。", "rate"),
        ("信用卡", "信用卡可以先消费后还款,按时全额还款一般不产生利息。", ""),
        ("复利", "复利就是利息也算进本金继续生息,时间越长增长越快。", "math"),
        ("质数", "质数是大于1、只能被1和它本身整除的整数,比如2、3、5、7。", "math"),
        ("圆周率", "圆周率是圆的周长和直径之比,约等于3.14159。", "math"),
        ("勾股定理", "勾股定理说的是直角三角形两条直角边的平方和等于斜边的平方。", "math"),
        ("百分数", "百分数表示一个数是另一个数的百分之几,比如50%就是一半。", "math"),
        ("分数", "分数表示把整体平均分成几份后取其中的几份,比如三分之一。", "math"),
        ("光年", "光年是长度单位,指光在一年里走过的距离,约9.46万亿公里。", "unit"),
        ("海里", "海里是航海和航空用的长度单位,一海里等于1852米。", "unit"),
        ("卡路里", "卡路里是热量单位,常用来表示食物含有多少能量。", "unit"),
        ("英寸", "英寸是英制长度单位,一英寸等于2.54厘米。", "unit"),
        ("同声传译", "同声传译是在讲话人说话的同时把内容译成另一种语言。", "translate"),
        ("文言文", "文言文是古代汉语的书面语,简洁凝练,和今天的白话文不一样。", "translate"),
        ("成语", "成语是汉语里固定下来的短语,多为四个字,比如画蛇添足。", ""),
        ("火山", "火山是地下岩浆喷出地面形成的山,喷发时会放出熔岩和火山灰。", ""),
        ("月食", "地球挡住照向月亮的阳光时就会发生月食,月亮会变暗甚至发红。", ""),
        ("恐龙", "恐龙是生活在两亿多年前到六千多万年前的爬行动物,后来灭绝了。", ""),
        ("细胞", "细胞是生物体结构和功能的基本单位。", ""),
        ("DNA", "DNA是携带遗传信息的分子,形状像一架扭转的梯子。", ""),
        ("互联网", "互联网是把全世界的计算机网络连在一起的系统。", ""),
        ("电动汽车", "电动汽车用电池供电驱动电机,不烧汽油,行驶时没有尾气。", ""),
        ("太阳能", "太阳能是来自太阳的能量,可以用太阳能电池板发电。", ""),
        ("蜜蜂", "蜜蜂采集花蜜酿成蜂蜜,还帮很多植物传粉。", ""),
        ("长城", "长城是中国古代修建的防御工程,绵延上万里。", ""),
        ("咖啡", "咖啡是用烘焙过的咖啡豆做成的饮料,含有提神的咖啡因。", ""),
        ("绿茶", "绿茶是不经发酵的茶,保留了茶叶的清香和绿色。", ""),
        ("冥想", "冥想是把注意力放在呼吸或当下的练习,能帮助人放松。", ""),
        ("马拉松", "马拉松是全程约42.195公里的长跑比赛。", ""),
        ("围棋", "围棋是两人对弈的棋类游戏,黑白双方在棋盘上争夺地盘。", ""),
        ("活字印刷", "活字印刷由北宋的毕昇发明,可以反复排版,大大加快了印书。", ""),
        ("指南针", "指南针利用磁针指示南北,是中国古代四大发明之一。", ""),
        ("电池", "电池把化学能转化为电能,给手机、手电筒等供电。", ""),
        ("密码学", "密码学研究怎样加密和解密信息,保护数据的安全。", ""),
        ("经济学", "经济学研究人们怎样分配有限的资源来满足需求。", ""),
        ("万有引力", "万有引力是任何两个有质量的物体之间相互吸引的力。", ""),
        ("奥运会", "奥运会是每四年举办一次的国际综合性体育盛会。", ""),
        ("大熊猫", "大熊猫是中国特有的动物,主要吃竹子,是国家一级保护动物。", ""),
        ("二十四节气", "二十四节气是古人按太阳的位置划分的时节,比如立春和冬至。", ""),
        ("垃圾分类", "垃圾分类就是把垃圾分成可回收物、厨余垃圾、有害垃圾和其他垃圾分别投放。", ""),
        ("维生素", "维生素是人体少量需要的营养素,很多蔬菜水果里都有。", ""),
        ("牛顿运动定律", "牛顿运动定律描述了力和物体运动之间的关系,比如惯性定律。", ""),
    ],
    "en": [
        (
            "humidity",
            "Humidity is how much water vapour the air holds; when it is high the air feels muggy.",
            "weather",
        ),
        (
            "air pressure",
            "Air pressure is the weight of the air above us; falling pressure often means the weather "
            "is about to change.",
            "weather",
        ),
        (
            "hurricanes",
            "Hurricanes are strong storms that form over warm oceans and bring high winds and heavy "
            "rain.",
            "weather",
        ),
        (
            "the UV index",
            "The UV index says how strong the sun's ultraviolet rays are: the higher it is, the faster "
            "skin burns.",
            "weather",
        ),
        (
            "fog",
            "Fog is a cloud at ground level, made of tiny water droplets that cut visibility.",
            "weather",
        ),
        (
            "monsoons",
            "A monsoon is a seasonal shift of winds that brings a long rainy season to places such as "
            "South Asia.",
            "weather",
        ),
        (
            "daylight saving time",
            "Clocks move forward an hour in summer to make better use of evening daylight, and back "
            "again in autumn.",
            "time",
        ),
        (
            "Greenwich Mean Time",
            "Greenwich Mean Time is the time at the Royal Observatory in Greenwich, London, long the "
            "world's reference.",
            "time",
        ),
        (
            "atomic clocks",
            "Atomic clocks count the vibrations of atoms and drift less than a second in millions of "
            "years.",
            "time",
        ),
        ("sundials", "A sundial tells the time from the shadow the sun casts on its face.", "time"),
        ("the euro", "The euro is the currency shared by most countries of the European Union.", "rate"),
        (
            "the US dollar",
            "The US dollar is the currency of the United States and the one most used in world trade.",
            "rate",
        ),
        (
            "credit cards",
            "A credit card lets you pay now and settle the bill later; paying it in full on time avoids"
            " interest.",
            "",
        ),
        (
            "compound interest",
            "Compound interest is interest earned on earlier interest, so savings grow faster the "
            "longer they stay.",
            "math",
        ),
        (
            "prime numbers",
            "A prime number is a whole number above 1 that only 1 and itself divide, like 2, 3, 5 and "
            "7.",
            "math",
        ),
        ("pi", "Pi is the ratio of a circle's circumference to its diameter, about 3.14159.", "math"),
        (
            "the Pythagorean theorem",
            "In a right triangle, the squares of the two shorter sides add up to the square of the "
            "longest side.",
            "math",
        ),
        ("percentages", "A percentage is a part out of a hundred: 50% means half.", "math"),
        (
            "fractions",
            "A fraction names a part of a whole, like one third when something is split into three "
            "equal parts.",
            "math",
        ),
        (
            "light-years",
            "A light-year is the distance light travels in a year, about 9.46 trillion kilometers.",
            "unit",
        ),
        (
            "nautical miles",
            "A nautical mile is the unit of distance at sea and in the air; it equals 1,852 meters.",
            "unit",
        ),
        ("calories", "A calorie is a unit of energy, used to say how much energy food provides.", "unit"),
        ("inches", "An inch is an imperial unit of length equal to 2.54 centimeters.", "unit"),
        (
            "interpreting",
            "Interpreters turn speech from one language into another, sometimes while the speaker is "
            "still talking.",
            "translate",
        ),
        (
            "idioms",
            "An idiom is a phrase whose meaning differs from its words, like 'break the ice'.",
            "translate",
        ),
        (
            "volcanoes",
            "A volcano is an opening in the earth's crust where molten rock, ash and gas escape.",
            "",
        ),
        (
            "lunar eclipses",
            "A lunar eclipse happens when the earth passes between the sun and the moon and its shadow "
            "darkens the moon.",
            "",
        ),
        (
            "dinosaurs",
            "Dinosaurs were reptiles that ruled the earth for over 160 million years and died out 66 "
            "million years ago.",
            "",
        ),
        ("cells", "Cells are the smallest living units; every plant and animal is built from them.", ""),
        ("DNA", "DNA is the molecule that carries genetic instructions, shaped like a twisted ladder.", ""),
        (
            "the internet",
            "The internet is a worldwide network that links computers so they can share information.",
            "",
        ),
        (
            "electric cars",
            "Electric cars run on batteries that power an electric motor, with no exhaust while "
            "driving.",
            "",
        ),
        ("solar power", "Solar power turns sunlight into electricity, usually with solar panels.", ""),
        ("bees", "Bees collect nectar to make honey and pollinate many of the plants we eat.", ""),
        (
            "the Great Wall of China",
            "The Great Wall is a chain of ancient fortifications that runs for thousands of kilometers "
            "across northern China.",
            "",
        ),
        (
            "coffee",
            "Coffee is a drink brewed from roasted coffee beans; its caffeine helps people feel alert.",
            "",
        ),
        ("green tea", "Green tea is made from unfermented tea leaves and keeps a fresh, grassy taste.", ""),
        (
            "meditation",
            "Meditation is the practice of resting attention on the breath or the present moment to "
            "calm the mind.",
            "",
        ),
        ("marathons", "A marathon is a long-distance race of about 42.2 kilometers.", ""),
        ("chess", "Chess is a strategy game for two players, each trying to checkmate the other's king.", ""),
        (
            "the printing press",
            "The printing press made it possible to copy books quickly, which spread knowledge widely.",
            "",
        ),
        (
            "compasses",
            "A compass has a magnetized needle that points north, which helps people find their way.",
            "",
        ),
        ("batteries", "A battery stores chemical energy and releases it as electricity.", ""),
        (
            "cryptography",
            "Cryptography is the science of encrypting and decrypting information to keep it secure.",
            "",
        ),
        ("economics", "Economics studies how people use limited resources to meet their needs.", ""),
        (
            "gravity",
            "Gravity is the force that pulls objects with mass toward each other; it keeps us on the "
            "ground.",
            "",
        ),
        (
            "the Olympic Games",
            "The Olympic Games are an international sports event held every four years.",
            "",
        ),
        ("giant pandas", "Giant pandas are bears native to China that eat mostly bamboo.", ""),
        ("recycling", "Recycling turns used paper, glass, metal and plastic into new products.", ""),
        (
            "vitamins",
            "Vitamins are nutrients the body needs in small amounts, found in fruit and vegetables.",
            "",
        ),
        (
            "Newton's laws of motion",
            "Newton's three laws describe how forces change the way objects move.",
            "",
        ),
    ],
}

# topics whose name holds a tool's own word (天气, 时间, 汇率, 单位, 翻译, 计算; weather, time, currency, ...),
# asked around the same topic templates: a question about such a subject still needs no call. Not drawn by
# default (make_agent_data.py --word_topics 1); none is an eval topic.
NO_TOOL_WORD_TOPICS = {
    "zh": [
        ("天气谚语", "天气谚语是人们从长期观察里总结出的经验,比如“朝霞不出门,晚霞行千里”。", "weather"),
        ("人工降雨", "人工降雨是向云层播撒催化剂,让云里的小水滴长大落下来。", "weather"),
        ("气温的日变化", "一天里气温通常在午后最高,在日出前后最低。", "weather"),
        ("极端天气", "极端天气指很少见的强烈天气,比如罕见的高温、暴雨和寒潮。", "weather"),
        ("时间管理", "时间管理就是合理安排时间,先做重要的事,少被琐事打断。", "time"),
        ("国际日期变更线", "国际日期变更线大致沿经度180度划定,向西越过它日期要加一天。", "time"),
        ("北京时间", "北京时间是中国统一使用的标准时间,比世界协调时早8小时。", "time"),
        ("倒时差", "倒时差是长途飞行以后,让身体慢慢适应当地作息的过程。", "time"),
        ("货币的起源", "最早人们用贝壳等实物当货币,后来才有了金属铸币和纸币。", "rate"),
        ("外汇储备", "外汇储备是一个国家的央行持有的外国货币和资产,用来应对国际支付。", "rate"),
        ("数字货币", "数字货币是以电子形式存在的货币,不印成纸币。", "rate"),
        ("汇率制度", "汇率制度是一个国家管理本币和外币兑换比例的方式,大致分为固定和浮动两类。", "rate"),
        ("市制单位", "市制单位是中国传统的计量单位,比如一斤等于五百克,一里等于五百米。", "unit"),
        ("温度计", "温度计是测量温度的仪器,常见的有水银温度计和电子温度计。", "unit"),
        ("长度单位的历史", "古人常用身体来量长短,比如一拃、一步;后来才有了统一的长度单位。", "unit"),
        ("千克的定义", "千克是质量的基本单位,如今用普朗克常数来定义。", "unit"),
        ("翻译的标准", "严复提出翻译要做到“信、达、雅”,也就是忠实、通顺、优美。", "translate"),
        ("口译和笔译", "口译是把说的话当场译出来,笔译是翻译书面文字。", "translate"),
        ("外来词", "外来词是从别的语言借来的词,比如“沙发”“咖啡”都是音译过来的。", "translate"),
        ("乘法口诀", "乘法口诀从“一一得一”到“九九八十一”,帮人快速算出两个一位数的乘积。", "math"),
        ("珠算", "珠算是用算盘计算的方法,已被列入人类非物质文化遗产。", "math"),
        ("心算", "心算就是不借助纸笔和工具,直接在脑子里计算。", "math"),
        ("计算器的历史", "从算盘、计算尺到电子计算器,计算工具越来越快,也越来越小。", "math"),
    ],
    "en": [
        ("weather proverbs", "Weather proverbs are old sayings drawn from long observation, like \"red sky "
         "at night, sailor's delight\".", "weather"),
        ("extreme weather", "Extreme weather means rare, severe events such as record heat, floods and cold "
         "snaps.", "weather"),
        ("weather balloons", "Weather balloons carry instruments high into the sky to measure temperature, "
         "pressure and wind.", "weather"),
        ("cloud seeding", "Cloud seeding scatters fine particles into clouds so that their droplets grow and "
         "fall as rain.", "weather"),
        ("time management", "Time management is planning your hours so that the important things get done "
         "first.", "time"),
        ("the International Date Line", "The International Date Line runs roughly along the 180th meridian; "
         "crossing it westward adds a day.", "time"),
        ("Coordinated Universal Time", "Coordinated Universal Time, or UTC, is the world's reference time; "
         "local times are offsets from it.", "time"),
        ("jet lag", "Jet lag is the tiredness after a long flight east or west, until your body clock "
         "adjusts.", "time"),
        ("the history of money", "People first traded shells and metals; coins and then paper money came "
         "later.", "rate"),
        ("foreign currency reserves", "Foreign currency reserves are foreign money and assets that a central "
         "bank holds to pay for imports and steady its own currency.", "rate"),
        ("digital currencies", "A digital currency exists only electronically; several central banks are "
         "testing their own.", "rate"),
        ("currency pegs", "A currency peg fixes a currency's value to another currency, such as the US "
         "dollar.", "rate"),
        ("the kilogram", "The kilogram is the base unit of mass; it is now defined by the Planck constant.",
         "unit"),
        ("thermometers", "A thermometer measures temperature; common kinds use alcohol, mercury or an "
         "electronic sensor.", "unit"),
        ("units of length in history", "People once measured with their feet and hands, long before "
         "countries agreed on standard units.", "unit"),
        ("traditional Chinese units", "Traditional Chinese units include the jin, half a kilogram, and the "
         "li, half a kilometer.", "unit"),
        ("translating poetry", "Translating poetry is hard, because rhyme, rhythm and wordplay rarely "
         "survive in another language.", "translate"),
        ("loanwords", "Loanwords are words borrowed from another language, like 'kindergarten' from German.",
         "translate"),
        ("subtitles", "Subtitles put a film's dialogue on screen as text, often translated into the viewer's "
         "language.", "translate"),
        ("the multiplication table", "The multiplication table lists the products of small numbers, from "
         "1 x 1 up to 9 x 9.", "math"),
        ("the abacus", "The abacus is a frame of beads on rods, used for calculating for thousands of years.",
         "math"),
        ("mental arithmetic", "Mental arithmetic is calculating in your head, without paper or a calculator.",
         "math"),
        ("the history of calculators", "Calculators grew from the abacus and the slide rule into pocket "
         "electronic machines.", "math"),
    ],
}

NO_TOOL_EVAL = {
    "zh": [
        "嗨,在吗?",
        "多谢你的帮忙",
        "你叫什么名字?",
        "你都会些什么本领?",
        "能解释一下什么是深度学习吗?",
        "给我说个冷笑话",
        "帮我写一句毕业祝福",
        "下午好呀",
        "最近压力好大怎么办?",
        "推荐一部好看的电影",
        "什么是区块链?",
        "用一句话介绍一下你自己",
        "拜拜啦",
    ],
    "en": [
        "Hey, are you there?",
        "Thanks a lot for your help.",
        "What's your name?",
        "What kinds of things are you able to help with?",
        "Can you explain what deep learning is?",
        "Tell me something funny.",
        "Write a short wish for a friend's wedding.",
        "Good afternoon!",
        "How can I deal with stress?",
        "Recommend a good movie.",
        "What is blockchain?",
        "See you later!",
    ],
}
# more held-out no_tool questions: eval-only templates around topics (some of them a tool's subject, where the
# right answer still needs no call)
NO_TOOL_EVAL_TEMPLATES = {
    "zh": ["能简单讲讲{topic}吗?", "{topic}是怎么一回事?", "给我科普一下{topic}"],
    "en": [
        "Can you explain {topic} in simple terms?",
        "What should I know about {topic}?",
        "Give me a short introduction to {topic}.",
    ],
}
NO_TOOL_EVAL_TOPICS = {
    "zh": [
        "量子计算",
        "通货膨胀",
        "黑洞",
        "疫苗的原理",
        "全球变暖",
        "潮汐",
        "时区的由来",
        "汇率为什么会变动",
        "华氏温标",
        "公制单位",
        "天气预报的原理",
        "翻译软件的原理",
        "四则运算",
        "闰年",
        "地震",
    ],
    "en": [
        "quantum computing",
        "inflation",
        "black holes",
        "vaccines",
        "global warming",
        "tides",
        "time zones",
        "exchange rates",
        "the Fahrenheit scale",
        "the metric system",
        "weather forecasting",
        "machine translation",
        "long division",
        "leap years",
        "earthquakes",
    ],
}

# ==========================================================================================================
# Train-only phrasing variety: openers, closers and end punctuation (SFT and RL prompts, never eval)
# ==========================================================================================================

# openers by the prompts they fit: "any" prompt, a "question" (it ends with ?), an en "command" (imperative)
OPENERS = {
    "zh": {
        "any": [
            "你好,",
            "您好,",
            "哈喽,",
            "打扰一下,",
            "帮个忙,",
            "劳驾,",
            "小助手,",
            "对了,",
            "那个,",
            "在不在?",
            "早呀,",
            "有件事:",
        ],
        "question": [
            "问一下,",
            "想问问,",
            "顺便问下,",
            "有个问题:",
            "随便问问,",
            "我很好奇,",
            "着急问下:",
            "请教一下:",
        ],
    },
    "en": {
        "any": [
            "Hi, ",
            "Hello! ",
            "Hi there! ",
            "Excuse me, ",
            "Sorry to bother you, ",
            "Hiya, ",
            "Yo, ",
            "OK so ",
            "Hello there, ",
            "Good day! ",
            "Morning! ",
            "Hi assistant, ",
        ],
        "question": [
            "Real quick: ",
            "One question: ",
            "Just wondering: ",
            "I'm curious, ",
            "Random question: ",
            "Curious: ",
        ],
        "command": ["Kindly ", "Pls ", "Go ahead and ", "Help me out: "],
    },
}
# closers: "after" follows a sentence's end mark; "inline" goes before the end mark (questions have their own)
CLOSERS = {
    "zh": {
        "after": [
            "谢谢!",
            "谢谢。",
            "谢谢啦",
            "感谢!",
            "辛苦了!",
            "先谢过了。",
            "拜托了!",
            "谢了!",
            "有劳了。",
            "感激不尽!",
        ],
        "inline": [",谢谢", ",谢啦", ",拜托了", ",辛苦啦", ",感谢"],
        "inline_question": ["呢", "啊"],
    },
    "en": {
        "after": [
            " Thank you!",
            " Thank you.",
            " Cheers!",
            " Much appreciated.",
            " Appreciate it!",
            " Thx!",
            " TIA!",
            " Ty.",
            " You're a lifesaver.",
            " You're the best.",
        ],
        "inline": [", pls", " pls", ", thank you", ", thx", ", if you can", ", if possible"],
        "inline_question": [", pls", " pls", ", if you know"],
    },
}
END_MARKS = "??!!.。"
END_VARIANTS = {
    ("zh", True): ["?", "?", "", "??"],
    ("zh", False): ["。", "", "!", "!"],
    ("en", True): ["?", "", "??", "?"],
    ("en", False): [".", "", "!"],
}
ZH_PARTICLES = "呢吗啊吧呀么"  # a question ending in one of these takes no inline particle
POLITE_ENDINGS = ("please", "pls", "谢谢")  # a prompt that already ends politely takes no inline closer
EN_COMMANDS = {
    "add",
    "calculate",
    "change",
    "check",
    "compare",
    "compute",
    "convert",
    "describe",
    "evaluate",
    "exchange",
    "get",
    "give",
    "help",
    "look",
    "recommend",
    "say",
    "show",
    "solve",
    "suggest",
    "sum",
    "tell",
    "translate",
    "work",
    "write",
}
# en first words that keep their capital after an opener: names of places, currencies, languages, "I"
KEEP_CAPITAL = {
    label.split()[0]
    for label in (
        [en for _, en in CITY_NAMES.values()]
        + [p for _, ens in TIME_PLACES.values() for p in ens]
        + [en for _, en in CURRENCY_NAMES.values()]
        + [en for _, en in ERROR_CURRENCIES.values()]
        + [p for _, ens in LANGUAGE_NAMES.values() for p in ens]
        + HINT_PLACES["en"]
        + ERROR_CITIES["en"]
        + [en for _, en, _ in ERROR_TIMEZONES]
    )
} | {"I", "I'm", "I'd", "I've", "I'll", "MiniMind", "Python", "Fahrenheit", "Celsius", "American"}

# ==========================================================================================================
# Answer templates (train style; also used as the RL reference answer)
# ==========================================================================================================

WEATHER_A = {
    "zh": [
        "{city}现在{temperature},{condition},湿度{humidity}。",
        "{city}当前天气:{condition},气温{temperature},湿度{humidity}。",
    ],
    "en": [
        "It's {temperature} and {condition} in {city} right now, with {humidity} humidity.",
        "Current weather in {city}: {condition}, {temperature}, humidity {humidity}.",
    ],
}
TIME_A = {
    "zh": ["{place}现在是{hhmm}({date},{weekday})。", "{place}当前时间:{date} {hhmm},{weekday}。"],
    "en": [
        "It's {hhmm} in {place} ({weekday}, {date}).",
        "The current time in {place} is {hhmm} on {weekday}, {date}.",
    ],
}
TIME_LOCAL_A = {
    "zh": ["现在是{hhmm}({date},{weekday})。", "现在是北京时间{hhmm},{date} {weekday}。"],
    "en": ["It's {hhmm} now ({weekday}, {date}).", "It's {hhmm} Beijing time, {weekday} {date}."],
}
EXCHANGE_A = {
    "zh": ["1{src}可兑换{rate}{dst}。", "{src}兑{dst}的汇率是{rate}。"],
    "en": ["1 {src} = {rate} {dst}.", "The {src} to {dst} exchange rate is {rate}."],
}
UNIT_A = {
    "zh": ["{value}{src}约等于{result}{dst}。", "换算结果:{value}{src} = {result}{dst}。"],
    "en": ["{value} {src} is about {result} {dst}.", "{value} {src} = {result} {dst}."],
}
MATH_A = {
    "zh": ["{expr} = {result}。", "计算结果是 {result}。", "{expr} 的结果是 {result}。"],
    "en": ["{expr} = {result}.", "The result is {result}."],
}
TRANSLATE_A = {
    "zh": ["“{text}”翻译成{language}是:{translation}", "翻译结果:{translation}"],
    "en": ["In {language}, '{text}' is: {translation}", "Translation: {translation}"],
}
PARALLEL_A = {
    "zh": ["{f1};{f2}。", "查询结果:{f1};{f2}。"],
    "en": ["{f1}; {f2}.", "Here is what I found: {f1}; {f2}."],
}
CHAIN_FAHRENHEIT_A = {
    "zh": ["{city}现在{temperature},换算成华氏度约为{f}°F。", "{city}当前气温{temperature},约合{f}华氏度。"],
    "en": [
        "It's {temperature} in {city}, which is about {f}°F.",
        "{city} is at {temperature} right now, roughly {f} degrees Fahrenheit.",
    ],
}
CHAIN_MONEY_A = {
    "zh": [
        "按汇率{rate}计算,{amount}{src}约可兑换{total}{dst}。",
        "{amount}{src}大约是{total}{dst}(汇率{rate})。",
    ],
    "en": [
        "At a rate of {rate}, {amount} {src} is about {total} {dst}.",
        "{amount} {src} is roughly {total} {dst} (rate {rate}).",
    ],
}
CHAIN_PRICE_A = {
    "zh": ["按汇率{rate}换算,{n}件一共约{total}{dst}。", "总价约{total}{dst}(汇率{rate})。"],
    "en": [
        "At a rate of {rate}, {n} of them cost about {total} {dst}.",
        "In total about {total} {dst} (rate {rate}).",
    ],
}
CHAIN_TOTAL_A = {
    "zh": ["{q}{src}×{n} = {total}{src},约合{result}{dst}。", "一共{total}{src},换算成{dst}约为{result}。"],
    "en": [
        "{n} × {q} {src} = {total} {src}, which is about {result} {dst}.",
        "The total is {total} {src}, about {result} {dst}.",
    ],
}
CORR_WEATHER_A = {
    "zh": [
        "{place}属于{parent},{parent}现在{temperature},{condition},湿度{humidity}。",
        "{place}在{parent},{parent}当前天气:{condition},{temperature}。",
    ],
    "en": [
        "{place} is in {parent}: {temperature} and {condition}, humidity {humidity}.",
        "{place} is part of {parent}: {condition}, {temperature}.",
    ],
}
CORR_MATH_A = {
    "zh": ["{fixed} = {result}。", "计算结果是 {result}。"],
    "en": ["{fixed} = {result}.", "The result is {result}."],
}
ERROR_WEATHER_A = {
    "zh": ["抱歉,暂时查不到{city}的天气,天气服务不支持这个城市。"],
    "en": ["Sorry, I couldn't get the weather for {city}; the service doesn't cover it."],
}
ERROR_EXCHANGE_A = {
    "zh": ["抱歉,查不到{src}兑{dst}的汇率,目前不支持这种货币。"],
    "en": ["Sorry, I couldn't get the {src} to {dst} rate; that currency is not supported."],
}
ERROR_TRANSLATE_A = {
    "zh": ["抱歉,暂时无法翻译“{text}”。"],
    "en": ["Sorry, I couldn't translate '{text}' right now."],
}
ERROR_TIME_A = {
    "zh": ["抱歉,查不到{place}的当前时间。"],
    "en": ["Sorry, I couldn't get the current time in {place}."],
}

THINK_ERROR = {
    "zh": "工具返回了错误,这个信息查不到,应该如实告诉用户。",
    "en": "The tool returned an error, so I cannot get this information; I should tell the user.",
}
THINK_DIRECT = {
    "zh": "这个问题不需要调用工具,直接回答即可。",
    "en": "No tool is needed for this; I can answer directly.",
}


# ==========================================================================================================
# The three phrasing splits
# ==========================================================================================================


def no_tool_eval_questions(lang) -> list:
    templated = [
        t.format(topic=topic) for topic in NO_TOOL_EVAL_TOPICS[lang] for t in NO_TOOL_EVAL_TEMPLATES[lang]
    ]
    return NO_TOOL_EVAL[lang] + templated


# no_tool train questions by kind; a "hard" one names the tool it is about by a short topic
NO_TOOL_TABLES = {
    "chat": NO_TOOL_CHAT, "smalltalk": NO_TOOL_SMALLTALK, "ask": NO_TOOL_ASK, "hard": NO_TOOL_HARD,
}
TOOL_TOPICS = {
    "math": "calculate_math",
    "unit": "unit_converter",
    "weather": "get_current_weather",
    "time": "get_current_time",
    "rate": "get_exchange_rate",
    "translate": "translate_text",
}
if sorted(TOOL_TOPICS.values()) != sorted(TOOL_NAMES):
    raise ValueError("TOOL_TOPICS: every tool needs exactly one topic")
for _lang in LANGS:
    for _q, _a, _topic in NO_TOOL_HARD[_lang]:
        if _topic not in TOOL_TOPICS and _topic != "all":
            raise ValueError(f"NO_TOOL_HARD[{_lang!r}]: unknown topic {_topic!r} for {_q!r}")
    for _name, _a, _topic in NO_TOOL_TOPICS[_lang]:
        if _topic not in TOOL_TOPICS and _topic != "":
            raise ValueError(f"NO_TOOL_TOPICS[{_lang!r}]: unknown tool topic {_topic!r} for {_name!r}")

# word problems for the calculator (dataset/math_grammar.py, make_agent_data.py --math_grammar): one table a
# kind; the slots are the kind's numbers ({scores} is a written list, {zhe} a discount in 折)
MATH_WORD_Q = {
    "price_count": {
        "train": {
            "zh": [
                "一个{price}元,买{count}个一共多少钱?",
                "单价{price}元的东西买了{count}件,总共要付多少?",
                "我要买{count}本书,每本{price}元,总价是多少",
                "{count}张票,每张{price}块,一共几块钱",
                "每份{price}元,点了{count}份,算一下总价",
                "超市里鸡蛋{price}元一盒,拿了{count}盒,要花多少钱?",
                "买{count}杯咖啡,一杯{price}元,合计多少",
                "{price}元一个的杯子,我买{count}个,一共多少?",
                "团购{count}份,每份{price}元,总额是多少",
                "一瓶水{price}元,{count}瓶多少钱",
            ],
            "en": [
                "If one ticket costs {price}, how much do {count} tickets cost?",
                "I'm buying {count} notebooks at {price} each. What's the total?",
                "{count} items at {price} apiece, how much altogether?",
                "What do {count} coffees cost if each is {price}?",
                "A box is {price} and I need {count} boxes. Total cost?",
                "how much for {count} shirts at {price} each",
                "Each seat is {price}. We need {count} seats, what will that come to?",
                "{count} units priced at {price} per unit: what's the bill?",
                "we ordered {count} pizzas at {price} each, how much is that",
                "What's the total for {count} books costing {price} each?",
            ],
        },
        "eval": {
            "zh": [
                "一件{price}元,{count}件要多少钱?",
                "{count}份外卖每份{price}元,总共多少",
                "{price}元一张,来{count}张,共计多少钱",
            ],
            "en": [
                "Tickets are {price} each; what will {count} of them cost?",
                "{count} mugs at {price} per mug comes to?",
                "total price for {count} at {price} each",
            ],
        },
    },
    "split": {
        "train": {
            "zh": [
                "{total}元{people}个人平分,每人多少?",
                "聚餐一共花了{total}元,{people}个人AA,每人出多少",
                "{total}块钱分给{people}个人,每个人分到多少?",
                "一共{total}元的账单,{people}人均摊,每人付多少?",
                "把{total}平均分成{people}份,每份是多少",
                "{people}个同事分{total}元奖金,一人多少",
                "房租{total}元,{people}个室友平摊,每人多少钱?",
                "{total}个苹果分给{people}个小朋友,每人几个?",
                "旅行花费{total}元,我们{people}个人分,每人要出多少",
                "{total}除以{people}个人,每个人是多少",
            ],
            "en": [
                "We spent {total} on dinner, split between {people} people. How much each?",
                "Split {total} evenly among {people} friends.",
                "The bill is {total} and there are {people} of us. What does each person pay?",
                "{total} shared equally by {people} people is how much per person?",
                "how much does each of {people} people get from {total}",
                "Divide a {total} prize among {people} winners, what's each share?",
                "Rent is {total} for {people} roommates. Each one's part?",
                "If {people} people share {total} equally, what does one get?",
                "{people} of us are splitting {total}, what's my share",
                "What's {total} split {people} ways?",
            ],
        },
        "eval": {
            "zh": [
                "{total}元大家{people}个人分摊,每人出多少?",
                "{people}人平分{total}元,一人能拿多少",
                "账单{total}元,{people}个人均分是多少",
            ],
            "en": [
                "{people} friends share a {total} bill equally. Each pays?",
                "how much is {total} between {people} people",
                "Each person's part when {total} is split by {people}?",
            ],
        },
    },
    "sum": {
        "train": {
            "zh": [
                "我这几次考试分别是{scores},总分多少?",
                "把{scores}加起来是多少",
                "{scores}的总和是多少?",
                "这周每天跑步的分钟数是{scores},一共跑了多少分钟?",
                "几门课的成绩是{scores},加起来多少分",
                "三个月的电费是{scores},合计多少",
                "{scores},这些数一共是多少?",
                "本周收入{scores},总共收入多少",
                "统计一下{scores}的和",
                "几次测验得了{scores}分,总分是?",
            ],
            "en": [
                "My test scores were {scores}. What's the total?",
                "Add up {scores} for me.",
                "What is the sum of {scores}?",
                "I ran {scores} minutes this week, how long in all?",
                "Total of {scores}?",
                "the bills were {scores}, what do they add up to",
                "Sum these: {scores}.",
                "Our team scored {scores}. Combined score?",
                "What do {scores} come to altogether?",
                "add {scores} together",
            ],
        },
        "eval": {
            "zh": [
                "请把{scores}求和",
                "这几笔开销{scores},一共多少钱?",
                "{scores}总计是多少",
            ],
            "en": [
                "Please total {scores}.",
                "These expenses: {scores}. Altogether?",
                "what's {scores} all added up",
            ],
        },
    },
    "average": {
        "train": {
            "zh": [
                "我的成绩是{scores},平均分是多少?",
                "{scores}的平均数是多少",
                "求{scores}的平均值",
                "这{n}天的气温是{scores},平均多少度?",
                "{n}次测验分数{scores},平均下来多少分",
                "算一下{scores}的平均",
                "几个人的年龄是{scores},平均年龄是?",
                "每天睡了{scores}个小时,平均每天睡多久?",
                "{scores}这{n}个数平均是多少?",
                "平均一下{scores}",
            ],
            "en": [
                "My scores are {scores}. What's my average?",
                "What is the average of {scores}?",
                "Find the mean of {scores}.",
                "average of {scores}",
                "The {n} readings were {scores}. What's the mean?",
                "Over {n} games we scored {scores}, what's the average per game?",
                "Mean of these {n} numbers: {scores}?",
                "I slept {scores} hours these nights, what's my average",
                "Can you average {scores}?",
                "What do {scores} average out to?",
            ],
        },
        "eval": {
            "zh": [
                "{scores}平均起来是多少?",
                "请帮我求{scores}的均值",
                "这{n}个分数{scores},均分多少",
            ],
            "en": [
                "Give me the mean of {scores}.",
                "{scores}, what's the average",
                "Average these {n} values: {scores}.",
            ],
        },
    },
    "discount": {
        "train": {
            "zh": [
                "原价{price}元,打{zhe}折后多少钱?",
                "{price}元的衣服打{zhe}折,现在卖多少",
                "一件{price}块的东西打{zhe}折是多少钱?",
                "标价{price}元,打{zhe}折,实际付多少?",
                "{price}元打{zhe}折等于多少",
                "原价{price},优惠{off}%,现价多少?",
                "{price}元的商品便宜了{off}%,现在多少钱",
                "打完{zhe}折,{price}元的鞋子要多少钱?",
                "{price}元减掉{off}%是多少",
                "这个{price}元的包打{zhe}折,要付多少",
            ],
            "en": [
                "A {price} jacket is {off}% off. What's the sale price?",
                "What's {price} with a {off}% discount?",
                "{price} minus {off} percent off, how much do I pay?",
                "The price is {price} and there's {off}% off, final price?",
                "how much is a {price} item at {off}% off",
                "Take {off}% off {price}.",
                "If something costs {price} and it's discounted by {off}%, what's the new price?",
                "{off}% off a {price} ticket comes to what?",
                "Sale: {off}% off everything. What does a {price} lamp cost now?",
                "What do I pay for {price} after a {off}% discount?",
            ],
        },
        "eval": {
            "zh": [
                "{price}元的东西打{zhe}折后付多少?",
                "现价是原价{price}元打{zhe}折,多少钱",
                "{price}元,折扣{off}%,最后多少钱?",
            ],
            "en": [
                "{price} less a {off}% discount is?",
                "What's the price after {off}% off {price}?",
                "with {off}% off, what does {price} become",
            ],
        },
    },
    "per_unit": {
        "train": {
            "zh": [
                "{count}个苹果一共{total}元,一个多少钱?",
                "买了{count}件花了{total}元,单价是多少",
                "{total}元买了{count}本书,平均每本多少?",
                "一箱{count}瓶卖{total}元,每瓶多少钱",
                "{count}张票总共{total}元,一张多少?",
                "{total}块钱{count}斤,一斤多少钱",
                "套餐{total}元含{count}份,每份多少钱?",
                "{count}个人的门票一共{total}元,每张票多少",
                "花{total}元买了{count}支笔,每支多少钱",
                "{count}件一共{total}元,算下单价",
            ],
            "en": [
                "{count} apples cost {total}. How much is one?",
                "I paid {total} for {count} tickets, what's the price per ticket?",
                "A pack of {count} costs {total}, how much per item?",
                "{total} for {count} books, what's that per book?",
                "What's the unit price if {count} units cost {total}?",
                "we paid {total} for {count} meals how much each",
                "{count} bottles for {total}: price of one bottle?",
                "If {count} pens cost {total}, what does each pen cost?",
                "Cost per item: {total} total, {count} items.",
                "How much is each one when {count} of them cost {total}?",
            ],
        },
        "eval": {
            "zh": [
                "共{total}元买了{count}个,平均一个多少钱?",
                "{count}个一共卖{total}元,每个价格是?",
                "总价{total}元,数量{count},单价多少",
            ],
            "en": [
                "{total} spent on {count} items, so each costs?",
                "Price of one if {count} cost {total}?",
                "what does one cost when {count} are {total}",
            ],
        },
    },
}

# --- the request grammar's currency words (make_agent_data.py --currency_grammar) ---------------------------
# SFT and RL only; the held-out sets keep CURRENCY_NAMES. code -> (Chinese words, English words): what people
# call each currency beside its name and code (never a bare "pounds", which is a weight here)
CURRENCY_SPELLINGS = {
    "USD": (["美金", "USD", "usd", "美刀"], ["dollars", "US dollars", "bucks", "usd", "American dollars"]),
    "CNY": (["RMB", "rmb", "CNY", "元"], ["yuan", "RMB", "rmb", "renminbi", "Chinese RMB", "cny"]),
    "EUR": (["EUR", "eur"], ["euros", "eur", "Euros", "EUR"]),
    "GBP": (["GBP", "gbp"], ["pounds sterling", "quid", "sterling", "gbp", "British pounds"]),
    "JPY": (["日币", "JPY", "jpy"], ["yen", "Japanese yen", "jpy", "JPY"]),
    "AUD": (["澳币", "澳大利亚元", "AUD"], ["Aussie dollars", "aud", "Australian dollars", "AUD"]),
}

# --- the request grammar's unit words and lead-ins (make_agent_data.py --unit_grammar, --lead_ins) ---------
# SFT and RL only; the held-out sets keep UNIT_NAMES and carry no lead-in.
# canonical unit -> (Chinese words, English words): every spelling, abbreviation and symbol people type
UNIT_SPELLINGS = {
    "km": (["公里", "千米", "km", "KM", "公里路"],
           ["km", "kms", "kilometers", "kilometres", "kilometer", "kilometre", "Km", "KM"]),
    "miles": (["英里", "mile", "miles"], ["miles", "mile", "mi", "mi.", "Miles"]),
    "kg": (["公斤", "千克", "kg", "KG", "kilo"],
           ["kg", "kgs", "kilograms", "kilogrammes", "kilos", "kilo", "KG"]),
    "pounds": (["磅", "lb", "lbs"], ["pounds", "pound", "lbs", "lb", "lbs.", "Lbs"]),
    "meters": (["米", "公尺", "m"], ["meters", "metres", "meter", "metre", "m", "Meters"]),
    "feet": (["英尺", "呎", "ft"], ["feet", "foot", "ft", "ft.", "Feet"]),
    "celsius": (["摄氏度", "°C", "℃", "度", "摄氏"],
                ["degrees Celsius", "°C", "C", "celsius", "Celsius", "degrees C", "deg C", "centigrade",
                 "℃"]),
    "fahrenheit": (["华氏度", "°F", "℉", "华氏"],
                   ["degrees Fahrenheit", "°F", "F", "fahrenheit", "Fahrenheit", "degrees F", "deg F", "℉"]),
}
# how a temperature below zero is typed: {n} is the number without its sign
NEGATIVE_FORMS = {"zh": ["-{n}", "零下{n}", "负{n}", "零下 {n}"],
                  "en": ["-{n}", "minus {n}", "negative {n}", "−{n}"]}
# a sentence of the user's situation before the request; none names a place, currency, unit or number, so it
# never changes which call is right
LEAD_INS = {
    "zh": [
        "我在做饭,手上都是面粉。", "刚下班,累死了。", "帮孩子检查作业呢。", "周末在家整理东西,",
        "正在写周报,", "刚跑完步回来,", "在地铁上,信号不太好,", "老板让我准备个材料,", "明天要出门,",
        "正在跟朋友聊天,", "最近在学东西,", "我是新来的实习生,", "开会间隙问一句,", "晚上睡不着,",
        "在网上看到一个说法,", "家里老人让我问问,", "正在准备考试,", "刚到酒店,", "想确认一下,",
        "我对这个不太熟,", "室友问我的,我也不知道,", "在写一篇文章,", "刚起床,", "午休时间,", "正在做表格,",
    ],
    "en": [
        "I'm cooking and my hands are covered in flour.", "Just got off work, so tired.",
        "Helping my kid with homework.", "Cleaning out the garage this weekend.", "Working on a report,",
        "Just back from a run,", "On the train and the signal is bad,", "My boss wants this by noon.",
        "Heading out tomorrow,", "Chatting with a friend and we got curious.",
        "Trying to learn something new,",
        "New intern here,", "Between meetings,", "Can't sleep,", "Saw something online and wondered.",
        "My grandma asked me this.", "Studying for an exam,", "Just checked into the hotel.",
        "Want to double check something.", "Not really my area,", "My roommate asked and I have no idea.",
        "Writing a blog post,", "Just woke up,", "On my lunch break,", "Filling in a spreadsheet,",
    ],
}

# every user template table, by intent (the error makers reuse the single-call tables)
TEMPLATE_TABLES = {
    "weather": WEATHER_Q,
    "time": TIME_Q,
    "time_local": TIME_LOCAL_Q,
    "exchange": EXCHANGE_Q,
    "unit": UNIT_Q,
    "math": MATH_Q,
    "translate": TRANSLATE_Q,
    "par_weather2": PAR_WEATHER2_Q,
    "par_weather_exchange": PAR_WEATHER_EXCHANGE_Q,
    "par_time2": PAR_TIME2_Q,
    "par_exchange2": PAR_EXCHANGE2_Q,
    "par_weather_time": PAR_WEATHER_TIME_Q,
    "chain_fahrenheit": CHAIN_FAHRENHEIT_Q,
    "chain_money": CHAIN_MONEY_Q,
    "chain_price": CHAIN_PRICE_Q,
    "chain_total": CHAIN_TOTAL_Q,
    "chain_convert": CHAIN_CONVERT_Q,
    "chain_split": CHAIN_SPLIT_Q,
    "corr_weather": CORR_WEATHER_Q,
    "corr_math": CORR_MATH_Q,
    **{f"math_{kind}": table for kind, table in MATH_WORD_Q.items()},
}

# Three phrasing splits that never share a phrasing: "sft" (the SFT conversations), "rl" (the agent RL prompt
# pool) and "eval" (the held-out set). The "train" lists hold SFT and RL phrasings together: every
# RL_EVERY-th one (the 5th, 10th, ...) is RL's, and the same goes for the no_tool (question, answer) lists.
RL_EVERY = 5


def carve_rl(items) -> tuple:
    """(SFT items, RL items) of one "train" list."""
    return (
        [x for i, x in enumerate(items) if i % RL_EVERY != RL_EVERY - 1],
        [x for i, x in enumerate(items) if i % RL_EVERY == RL_EVERY - 1],
    )


for _table in TEMPLATE_TABLES.values():
    _train = _table.pop("train")
    _table["sft"], _table["rl"] = {}, {}
    for _lang in LANGS:
        _table["sft"][_lang], _table["rl"][_lang] = carve_rl(_train[_lang])
NO_TOOL_SPLITS = {"sft": {}, "rl": {}}  # phrasing split -> kind -> lang -> [(question, answer[, topic])]
for _kind, _pairs in NO_TOOL_TABLES.items():
    NO_TOOL_SPLITS["sft"][_kind], NO_TOOL_SPLITS["rl"][_kind] = {}, {}
    for _lang in LANGS:
        NO_TOOL_SPLITS["sft"][_kind][_lang], NO_TOOL_SPLITS["rl"][_kind][_lang] = carve_rl(_pairs[_lang])


def topic_questions(topics) -> dict:
    """split -> lang -> [(question, answer, tool topic)]: every topic template of a split around every topic
    (the templates are carved, not the topics)."""
    out = {"sft": {}, "rl": {}}
    for lang in LANGS:
        for split, templates in zip(("sft", "rl"), carve_rl(NO_TOOL_TOPIC_TEMPLATES[lang])):
            out[split][lang] = [(t.format(topic=name), answer, tool) for t in templates
                                for name, answer, tool in topics[lang]]
    return out


# the "topic" kind; the word topics (--word_topics) the same way, kept apart: drawn only when asked for
NO_TOOL_SPLITS["sft"]["topic"], NO_TOOL_SPLITS["rl"]["topic"] = topic_questions(NO_TOOL_TOPICS).values()
NO_TOOL_WORD_SPLITS = topic_questions(NO_TOOL_WORD_TOPICS)  # split -> lang -> [(question, answer, topic)]


def frame_questions() -> dict:
    """split -> lang -> [(question, answer, tool topic)]: the frames people ask in (no_tool_frames.ASK_FRAMES,
    carved into SFT and RL) around the train topics and MORE_TOPICS (--no_tool_frames)."""
    out = {"sft": {}, "rl": {}}
    for lang in LANGS:
        subjects = NO_TOOL_TOPICS[lang] + [(name, answer, "") for name, answer in MORE_TOPICS[lang]]
        for split, frames in zip(("sft", "rl"), carve_rl(ASK_FRAMES[lang])):
            out[split][lang] = [(f.format(topic=name), answer, tool) for f in frames
                                for name, answer, tool in subjects]
    return out


NO_TOOL_FRAME_SPLITS = frame_questions()
for _lang in LANGS:
    for _name, _a, _topic in NO_TOOL_WORD_TOPICS[_lang]:
        if _topic not in TOOL_TOPICS:
            raise ValueError(f"NO_TOOL_WORD_TOPICS[{_lang!r}]: unknown tool topic {_topic!r} for {_name!r}")

# --- questions about the tool world's own things that need no live value (make_agent_data.py --entity_topics)
# A city's sights or climate, the country it is in, who issues a currency, a place's time zone: each names
# what a tool looks up, and none asks for what the tool returns now.
# city -> (Chinese: (known for, climate), English: (known for, climate))
CITY_FACTS = {
    "北京": (
        (
            "北京是中国的首都,有故宫、天坛和长城,北京烤鸭也很有名。",
            "北京是温带季风气候,夏天炎热多雨,冬天寒冷干燥,春秋比较短。",
        ),
        (
            "Beijing is China's capital, home to the Forbidden City, the Temple of Heaven and nearby "
            "stretches of the Great Wall; Peking duck is its best-known dish.",
            "Beijing has hot, rainy summers, cold and dry winters, and short springs and autumns.",
        ),
    ),
    "上海": (
        (
            "上海是中国的经济中心之一,外滩、豫园和陆家嘴的摩天楼最出名。",
            "上海是亚热带季风气候,四季分明,夏天湿热,六七月有梅雨。",
        ),
        (
            "Shanghai is one of China's biggest financial centres, known for the Bund, Yu Garden and the "
            "Lujiazui skyline.",
            "Shanghai has four clear seasons, humid summers and a plum-rain season in June and July.",
        ),
    ),
    "广州": (
        (
            "广州是广东省会,以粤菜、早茶和广交会闻名。",
            "广州夏季长而湿热,冬天温和,几乎不下雪。",
        ),
        (
            "Guangzhou, the capital of Guangdong, is famous for Cantonese food, dim sum and the Canton Fair.",
            "Guangzhou has long, hot and humid summers and mild winters; snow almost never falls there.",
        ),
    ),
    "深圳": (
        (
            "深圳紧邻香港,是中国的科技中心,四十多年里从小镇发展成大城市。",
            "深圳全年温暖,夏秋季节会受台风影响。",
        ),
        (
            "Shenzhen borders Hong Kong and is a centre of China's tech industry; it grew from a small town "
            "into a megacity in about forty years.",
            "Shenzhen is warm all year, with typhoons now and then in summer and autumn.",
        ),
    ),
    "杭州": (
        (
            "杭州以西湖和龙井茶出名,也是很多互联网公司的所在地。",
            "杭州四季分明,夏天炎热,冬天湿冷,春秋两季最适合游西湖。",
        ),
        (
            "Hangzhou is known for West Lake and Longjing tea, and is home to many internet companies.",
            "Hangzhou has hot summers and damp, cold winters; spring and autumn are the best times for West "
            "Lake.",
        ),
    ),
    "成都": (
        (
            "成都是四川省会,大熊猫基地、火锅和宽窄巷子都很有名,生活节奏比较悠闲。",
            "成都在四川盆地,云雾多、日照少,所以阴天多,冬天湿冷。",
        ),
        (
            "Chengdu, the capital of Sichuan, is known for its giant panda base, hotpot and a relaxed pace "
            "of life.",
            "Chengdu sits in the Sichuan Basin, where cloud and fog are common and sunshine is scarce, so "
            "overcast days are frequent.",
        ),
    ),
    "武汉": (
        (
            "武汉是湖北省会,长江和汉江在这里交汇,热干面和黄鹤楼很有名。",
            "武汉夏天非常炎热,曾被叫做“火炉”之一,冬天湿冷。",
        ),
        (
            "Wuhan, the capital of Hubei, lies where the Han River meets the Yangtze; it is known for hot "
            "dry noodles and the Yellow Crane Tower.",
            "Wuhan's summers are very hot, it was called one of China's furnaces, and its winters are damp "
            "and cold.",
        ),
    ),
    "南京": (
        (
            "南京是六朝古都,中山陵、明城墙和夫子庙最有名。",
            "南京四季分明,夏天闷热,梅雨季节雨水多。",
        ),
        (
            "Nanjing was the capital of several dynasties; the Sun Yat-sen Mausoleum, the Ming city wall and"
            " the Confucius Temple are its landmarks.",
            "Nanjing has four clear seasons, muggy summers and a rainy plum-rain season.",
        ),
    ),
    "西安": (
        (
            "西安是十三朝古都,也是丝绸之路的起点,兵马俑、古城墙和大雁塔最有名。",
            "西安气候偏干,夏天炎热,冬天寒冷少雪。",
        ),
        (
            "Xi'an was the capital of many dynasties and the start of the Silk Road; the Terracotta Army, "
            "the city wall and the Big Wild Goose Pagoda are its sights.",
            "Xi'an is fairly dry, with hot summers and cold winters with little snow.",
        ),
    ),
    "重庆": (
        (
            "重庆是山城,依山而建,火锅、洪崖洞和长江索道很出名。",
            "重庆夏天炎热潮湿,秋冬多雾,被叫做“雾都”。",
        ),
        (
            "Chongqing is a mountain city built on steep hills, known for hotpot, Hongyadong and the Yangtze"
            " cableway.",
            "Chongqing has hot, humid summers and foggy autumns and winters; it is nicknamed the fog city.",
        ),
    ),
    "Tokyo": (
        (
            "东京是日本首都,浅草寺、涩谷路口和东京塔都很有名。",
            "东京夏天湿热,冬天晴朗干燥,春天的樱花季游客最多。",
        ),
        (
            "Tokyo is Japan's capital, known for Senso-ji temple, the Shibuya crossing and Tokyo Tower.",
            "Tokyo has humid summers and dry, sunny winters; the cherry blossoms in spring draw the most "
            "visitors.",
        ),
    ),
    "New York": (
        (
            "纽约是美国最大的城市,有自由女神像、中央公园和百老汇。",
            "纽约四季分明,夏天炎热潮湿,冬天寒冷,常有降雪。",
        ),
        (
            "New York is the largest city in the United States, home to the Statue of Liberty, Central Park "
            "and Broadway.",
            "New York has hot, humid summers and cold winters with regular snow.",
        ),
    ),
    "London": (
        (
            "伦敦是英国首都,大本钟、伦敦塔和大英博物馆都很有名。",
            "伦敦是温带海洋性气候,全年温和,小雨天多,但总降水量不算大。",
        ),
        (
            "London is the capital of the United Kingdom, known for Big Ben, the Tower of London and the "
            "British Museum.",
            "London has a mild oceanic climate with many days of light rain, though its yearly rainfall is "
            "not high.",
        ),
    ),
    "Paris": (
        (
            "巴黎是法国首都,埃菲尔铁塔、卢浮宫和美食都很出名。",
            "巴黎气候温和,夏天温暖,冬天凉爽,一年四季降水比较均匀。",
        ),
        (
            "Paris is the capital of France, famous for the Eiffel Tower, the Louvre and its food.",
            "Paris has warm summers, cool winters and rain spread evenly through the year.",
        ),
    ),
    "Sydney": (
        (
            "悉尼是澳大利亚最大的城市,但首都是堪培拉;悉尼歌剧院和海港大桥最有名。",
            "悉尼在南半球,十二月到二月是夏天,圣诞节正值夏季,气候温暖。",
        ),
        (
            "Sydney is Australia's largest city, though the capital is Canberra; the Opera House and the "
            "Harbour Bridge are its landmarks.",
            "Sydney is in the southern hemisphere, so December to February is summer and Christmas comes in "
            "warm weather.",
        ),
    ),
}
# city -> (country zh, country en, capital zh, capital en)
CITY_COUNTRIES = {
    **{c: ("中国", "China", "北京", "Beijing") for c in ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "南京",
                                                     "西安", "重庆"]},
    "Tokyo": ("日本", "Japan", "东京", "Tokyo"),
    "New York": ("美国", "the United States", "华盛顿", "Washington, D.C."),
    "London": ("英国", "the United Kingdom", "伦敦", "London"),
    "Paris": ("法国", "France", "巴黎", "Paris"),
    "Sydney": ("澳大利亚", "Australia", "堪培拉", "Canberra"),
}
CURRENCY_FACTS = {  # code -> (Chinese, English)
    "USD": (
        "美元由美国联邦储备系统发行,是世界上持有最多的储备货币。",
        "The US dollar is issued by the Federal Reserve and is the world's most widely held reserve "
        "currency.",
    ),
    "CNY": (
        "人民币由中国人民银行发行,基本单位是元,一元等于十角。",
        "The Chinese yuan, or renminbi, is issued by the People's Bank of China; one yuan is ten jiao.",
    ),
    "EUR": (
        "欧元1999年启用,2002年开始流通,由欧洲央行管理,欧元区的二十个国家都用它。",
        "The euro was launched in 1999, went into circulation in 2002, and is run by the European Central "
        "Bank for the twenty eurozone countries.",
    ),
    "GBP": (
        "英镑由英格兰银行发行,是至今仍在使用的最古老的货币之一,英国没有加入欧元区。",
        "The pound sterling is issued by the Bank of England and is one of the oldest currencies still in "
        "use; the UK never adopted the euro.",
    ),
    "JPY": (
        "日元由日本银行发行,硬币和纸币从一日元到一万日元不等。",
        "The Japanese yen is issued by the Bank of Japan; its coins and notes run from 1 to 10,000 yen.",
    ),
    "AUD": (
        "澳元由澳大利亚储备银行发行,它的纸币是塑料做的。",
        "The Australian dollar is issued by the Reserve Bank of Australia, and its notes are made of "
        "polymer.",
    ),
}
ZONE_FACTS = {  # timezone -> how its zone is named
    "Asia/Shanghai": ("北京时间,也就是UTC+8", "China Standard Time, UTC+8"),
    "Asia/Tokyo": ("日本标准时间,UTC+9", "Japan Standard Time, UTC+9"),
    "America/New_York": ("美国东部时间,UTC-5,夏令时是UTC-4", "Eastern Time, UTC-5, or UTC-4 in summer"),
    "Europe/London": ("格林尼治时间,UTC+0,夏令时是UTC+1", "Greenwich Mean Time, UTC+0, or UTC+1 in summer"),
    "Europe/Paris": ("中欧时间,UTC+1,夏令时是UTC+2", "Central European Time, UTC+1, or UTC+2 in summer"),
    "Australia/Sydney": ("澳大利亚东部时间,UTC+10,夏令时是UTC+11",
                         "Australian Eastern Time, UTC+10, or UTC+11 in summer"),
}
# facet -> lang -> question templates (carved into SFT and RL like every train list)
ENTITY_QUESTIONS = {
    "known": {
        "zh": ["{city}有什么好玩的地方?", "{city}以什么出名?", "第一次去{city},有什么推荐?", "{city}有哪些特色?",
               "给我介绍一下{city}这座城市", "{city}值得去吗?", "{city}有哪些必去的景点?", "{city}有什么好吃的?"],
        "en": ["What is {city} famous for?", "Any tips for a first trip to {city}?",
               "What should I see in {city}?",
               "Is {city} worth visiting?", "Tell me a bit about the city of {city}.",
               "What's {city} known for?",
               "What are the must-see sights in {city}?", "What food is {city} known for?"],
    },
    "climate": {
        "zh": ["{city}的气候怎么样?", "{city}一般什么季节去比较好?", "{city}属于什么气候?", "{city}一年四季天气有什么特点?",
               "{city}的冬天一般冷吗?", "{city}的夏天通常热不热?"],
        "en": ["What's the climate like in {city}?", "What is the weather usually like in {city}?",
               "When is the best season to visit {city}?", "What kind of climate does {city} have?",
               "Are winters usually cold in {city}?", "Does {city} usually get hot in summer?"],
    },
    "country": {
        "zh": ["{city}在哪个国家?", "{city}是哪个国家的城市?", "{city}是首都吗?", "{city}属于哪个国家?", "{city}是哪国的?"],
        "en": ["Which country is {city} located in?", "Is {city} a capital city?",
               "What country is {city} in?",
               "Is {city} the capital of its country?", "{city} is in which country?"],
    },
    "currency": {
        "zh": ["{cur}是谁发行的?", "介绍一下{cur}的历史", "{cur}是哪里的货币?", "关于{cur}有什么要知道的?", "{cur}是怎么来的?"],
        "en": ["Who issues the {cur}?", "Tell me about the history of the {cur}.", "Where is the {cur} used?",
               "What should I know about the {cur}?", "Which central bank is behind the {cur}?"],
    },
    "zone": {
        "zh": ["{place}用的是哪个时区?", "{place}属于哪个时区?", "{place}的时区叫什么?", "{place}在东几区还是西几区?",
               "{place}是用哪个时区的时间?"],
        "en": ["What time zone is {place} in?", "Which time zone does {place} use?",
               "What's the time zone of {place}?",
               "How far is {place} from UTC?", "Which zone are clocks in {place} set to?"],
    },
}


def entity_answer(facet, key, lang, name) -> str:
    zh = lang == "zh"
    if facet in ("known", "climate"):
        return CITY_FACTS[key][not zh][facet == "climate"]
    if facet == "country":
        country_zh, country_en, capital_zh, capital_en = CITY_COUNTRIES[key]
        if zh:
            capital = "它就是首都。" if capital_zh == name else f"{country_zh}的首都是{capital_zh}。"
            return f"{name}在{country_zh}," + capital
        capital = "and it is the capital." if capital_en == name else f"whose capital is {capital_en}."
        return f"{name} is in {country_en}, {capital}"
    if facet == "currency":
        return CURRENCY_FACTS[key][not zh]
    zone = ZONE_FACTS[key][not zh]
    return f"{name}用的是{zone}。" if zh else f"{name} uses {zone}."


def entity_questions() -> dict:
    """split -> lang -> [(question, answer, tool topic)]: every facet's templates, carved into SFT and RL,
    around every city, currency or place of the tool world."""
    out = {"sft": {lang: [] for lang in LANGS}, "rl": {lang: [] for lang in LANGS}}
    for facet, table in ENTITY_QUESTIONS.items():
        for lang in LANGS:
            i = 0 if lang == "zh" else 1
            if facet == "currency":
                names, slot, topic = [(k, v[i]) for k, v in CURRENCY_NAMES.items()], "cur", "rate"
            elif facet == "zone":
                names = [(tz, p) for tz, ps in TIME_PLACES.items() for p in ps[i]]
                slot, topic = "place", "time"
            else:
                names, slot, topic = [(c, v[i]) for c, v in CITY_NAMES.items()], "city", "weather"
            for split, templates in zip(("sft", "rl"), carve_rl(table[lang])):
                out[split][lang] += [(t.format(**{slot: name}), entity_answer(facet, key, lang, name), topic)
                                     for t in templates for key, name in names]
    return out


NO_TOOL_ENTITY_SPLITS = entity_questions()

# ==========================================================================================================
# Shared frames: one wording on both sides of the call boundary
# ==========================================================================================================
# A topic template ("Tell me about {topic}.") asks about a subject and is answered without a tool. The same
# frame around a request for live data or a computation ("Tell me about the weather in Paris right now.")
# needs the tool. SHARED_FRAMES are the topic templates that read well both ways; composed with the
# REQUEST_PHRASES of a template table they give that table "framed" train templates, so that the frame says
# nothing about a call and what decides it is what is asked for: a city, a place, two currencies, a value and
# units, an expression, a text. A frame keeps its topic template's split (SFT or RL), so a framed template is
# never in another split than the no_tool questions with the same frame. Eval prompts never use them.
SHARED_FRAMES = {
    "zh": [
        "介绍一下{topic}", "说说{topic}吧", "跟我聊聊{topic}", "我想了解{topic}", "帮我理解一下{topic}",
        "关于{topic},你知道些什么?", "你了解{topic}吗?", "谈谈{topic}", "我对{topic}很好奇",
        "能介绍下{topic}吗?", "解释一下{topic}", "能解释下{topic}吗?", "可以介绍一下{topic}吗?",
        "请讲讲{topic}", "给我讲讲{topic}吧", "帮我讲解一下{topic}", "你能说明一下{topic}吗?",
        "想听你聊一聊{topic}", "描述一下{topic}吧", "关于{topic}能多说几句吗?", "麻烦讲解一下{topic}",
        "教教我{topic}", "请给我解释{topic}",
    ],
    "en": [
        "Tell me about {topic}.", "What do you know about {topic}?", "I'm curious about {topic}.",
        "Help me understand {topic}.", "Could you say a few words about {topic}?",
        "Give me an overview of {topic}.", "Talk to me about {topic}.", "Summarize {topic} for me.",
        "Fill me in on {topic}.", "Do you know anything about {topic}?", "Explain {topic}.",
        "Could you explain {topic} to me?", "Please describe {topic}.", "Walk me through {topic}.",
        "Break down {topic} for me.", "Can you describe {topic}?", "What can you tell me about {topic}?",
        "Could you clarify {topic} for me?", "Please tell me a little about {topic}.",
    ],
}
# what a framed request asks for, by template table (the table's own placeholders)
REQUEST_PHRASES = {
    "weather": {
        "zh": ["{city}现在的天气", "{city}今天的天气情况", "{city}实时的温度和湿度"],
        "en": ["the weather in {city} right now", "today's weather in {city}",
               "the current temperature and humidity in {city}"],
    },
    "corr_weather": {
        "zh": ["{place}现在的天气", "{place}今天的天气情况"],
        "en": ["the weather in {place} right now", "today's weather in {place}"],
    },
    "time": {
        "zh": ["{place}现在的时间", "{place}此刻是几点"],
        "en": ["the current time in {place}", "what time it is in {place} right now"],
    },
    "exchange": {
        "zh": ["今天{src}兑{dst}的汇率", "{src}换{dst}的最新汇率"],
        "en": ["today's {src} to {dst} exchange rate", "the latest rate from {src} to {dst}"],
    },
    "unit": {
        "zh": ["{value}{src}换算成{dst}是多少", "{value}{src}等于多少{dst}"],
        "en": ["how many {dst} {value} {src} is", "{value} {src} converted to {dst}"],
    },
    "math": {
        "zh": ["{expr}的计算结果", "{expr}等于多少"],
        "en": ["the result of {expr}", "what {expr} comes to"],
    },
    "translate": {
        "zh": ["“{text}”用{lang}怎么说", "把“{text}”翻成{lang}"],
        "en": ["how to say '{text}' in {lang}", "'{text}' translated into {lang}"],
    },
}


def framed_templates(name, lang) -> dict:
    """{"sft": [...], "rl": [...]}: the framed train templates of template table `name`."""
    out = {"sft": [], "rl": []}
    for split, templates in zip(("sft", "rl"), carve_rl(NO_TOOL_TOPIC_TEMPLATES[lang])):
        for frame in templates:
            if frame in SHARED_FRAMES[lang]:  # a shared frame that is no topic template: check_phrasings
                out[split] += [frame.format(topic=phrase) for phrase in REQUEST_PHRASES[name][lang]]
    return out


for _name in REQUEST_PHRASES:
    for _lang in LANGS:
        for _split, _templates in framed_templates(_name, _lang).items():
            TEMPLATE_TABLES[_name].setdefault(f"{_split}_framed", {})[_lang] = _templates

# ==========================================================================================================
# Shared quantity frames: one wording around a plain amount and around a count of items
# ==========================================================================================================
# A currency request names an amount ("500 EUR": one call's result times the amount) or a count of items at
# a price ("4 tickets at 25 EUR": the price times the count times the rate); a unit request names a value or
# a count of lots of it. When each kind has its own wordings, a model can take the kind from the wording
# and, on a wording it has not seen, invent a count from an amount's digits or drop one it was given.
# QUANTITY_FRAMES are wordings around any quantity; composed with a table's QUANTITY_PHRASES they give that
# table "quantity" SFT templates, so the same frame asks for each kind and only the quantity tells which.
# SFT only: the RL pool and the held-out sets are unchanged.
QUANTITY_FRAMES = {
    "zh": [
        "{x}换算成{dst}是多少?", "{x}等于多少{dst}?", "请把{x}换成{dst}", "{x}换作{dst}是多少?",
        "帮我算算{x}是多少{dst}", "我想知道{x}用{dst}表示是多少", "{x},换成{dst}呢?",
        "请告诉我{x}相当于多少{dst}",
    ],
    "en": [
        "What is {x} in {dst}?", "Convert {x} to {dst}.", "How many {dst} is {x}?", "Give me {x} in {dst}.",
        "Please express {x} in {dst}.", "I need {x} in {dst}.", "{x}: how much is that in {dst}?",
        "Tell me what {x} equals in {dst}.",
    ],
}
# goods bought by the piece, for quantity phrases: (measure word, item) and (plural, one of them)
GOODS = {
    "zh": [("件", "衬衫"), ("张", "门票"), ("杯", "奶茶"), ("瓶", "红酒"), ("本", "杂志"), ("双", "鞋"),
           ("盒", "巧克力"), ("台", "电脑"), ("个", "背包"), ("袋", "咖啡豆")],
    "en": [("shirts", "shirt"), ("tickets", "ticket"), ("coffees", "coffee"), ("bottles of wine", "bottle"),
           ("magazines", "magazine"), ("pairs of shoes", "pair"), ("boxes of chocolate", "box"),
           ("laptops", "laptop"), ("backpacks", "backpack"), ("bags of rice", "bag")],
}
# a count of goods at a price, and one of them at an amount (the same goods, the count the only difference)
COUNT_FORMS = {
    "zh": ["{n}{m}{item},每{m}{price}{src}", "{n}{m}单价{price}{src}的{item}", "{item}{price}{src}一{m},买{n}{m}"],
    "en": ["{n} {items} at {price} {src} each", "{n} {items}, {price} {src} per {one}",
           "{n} {items} costing {price} {src} a {one}"],
}
ONE_FORMS = {
    "zh": ["一{m}{amount}{src}的{item}", "{item}一{m},{amount}{src}"],
    "en": ["one {one} at {amount} {src}", "a single {one} costing {amount} {src}"],
}


def goods_phrases(forms, lang) -> list:
    """Every form around every kind of goods; the table's own placeholders are kept."""
    keep = {k: "{" + k + "}" for k in ("n", "price", "amount", "src")}
    if lang == "zh":
        return [f.format(m=m, item=item, **keep) for f in forms[lang] for m, item in GOODS[lang]]
    return [f.format(items=items, one=one, **keep) for f in forms[lang] for items, one in GOODS[lang]]


# the quantity of each table's requests, in the table's own placeholders
QUANTITY_PHRASES = {
    "chain_money": {
        lang: base + goods_phrases(ONE_FORMS, lang) for lang, base in (
            ("zh", ["{amount}{src}", "{amount}{src}现金", "一笔{amount}{src}的款项", "一件{amount}{src}的商品"]),
            ("en", ["{amount} {src}", "{amount} {src} in cash", "a payment of {amount} {src}",
                    "one item costing {amount} {src}"]))
    },
    "chain_price": {
        lang: base + goods_phrases(COUNT_FORMS, lang) for lang, base in (
            ("zh", ["{n}件{price}{src}的商品", "{n}张每张{price}{src}的票", "单价{price}{src}的东西{n}件",
                    "{n}瓶每瓶{price}{src}的饮料"]),
            ("en", ["{n} items costing {price} {src} each", "{n} tickets at {price} {src} per ticket",
                    "{n} bottles, {price} {src} a bottle", "{price} {src} each for {n} pieces"]))
    },
    "unit": {
        "zh": ["{value}{src}", "整整{value}{src}"],
        "en": ["{value} {src}", "exactly {value} {src}"],
    },
    "chain_total": {
        "zh": ["{n}个{q}{src}合在一起", "{n}袋每袋{q}{src}", "{q}{src}的{n}倍"],
        "en": ["{n} lots of {q} {src} added up", "{n} bags of {q} {src} each", "{n} times {q} {src}"],
    },
}


def quantity_templates(name, lang) -> list:
    """The quantity SFT templates of template table `name`: every frame around every phrase."""
    return [f.replace("{x}", p) for f in QUANTITY_FRAMES[lang] for p in QUANTITY_PHRASES[name][lang]]


for _name in QUANTITY_PHRASES:
    for _lang in LANGS:
        TEMPLATE_TABLES[_name].setdefault("sft_quantity", {})[_lang] = quantity_templates(_name, _lang)
