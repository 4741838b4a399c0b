"""
The calculator behind calculate_math: arithmetic over Python's ast, never eval.

Numbers, + - * / // % **, parentheses, a few functions (sqrt, round, log, sin, factorial, ...) and the
constants pi and e. Sizes are bounded (expression length, integer bits, exponents, factorial), so no
expression can run the machine out of time or memory; every refusal is a ToolError whose message, and hint
where there is one, goes back to the model.
"""
import ast
import math
import operator
import re
import unicodedata

from trainer.tool_runner import ToolError


MAX_EXPRESSION_CHARS = 300
MAX_INT_BITS = 1024  # any integer result or intermediate beyond this is refused ("result too large")
MAX_FACTORIAL = 100
_BIN_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY_OPS = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _factorial(n):
    if n != int(n) or n < 0 or n > MAX_FACTORIAL:
        raise ToolError(f"factorial needs an integer in 0..{MAX_FACTORIAL}")
    return math.factorial(int(n))


MAX_ROUND_DIGITS = 100  # round(x, -10**7) would build 10**10**7


def _round(x, ndigits=None):
    if ndigits is None:
        return round(x)
    if ndigits != int(ndigits) or abs(ndigits) > MAX_ROUND_DIGITS:
        raise ToolError(f"round needs a whole number of digits in -{MAX_ROUND_DIGITS}..{MAX_ROUND_DIGITS}")
    return round(x, int(ndigits))


MATH_FUNCTIONS = {
    "sqrt": math.sqrt, "abs": abs, "round": _round, "floor": math.floor, "ceil": math.ceil,
    "exp": math.exp, "log": math.log, "log10": math.log10, "log2": math.log2, "ln": math.log,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "factorial": _factorial,
}
TWO_ARGUMENTS = {"round", "log"}  # the functions that take a second argument (digits, base)
MATH_CONSTANTS = {"pi": math.pi, "e": math.e}
SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
SUPERSCRIPT_RUN = re.compile("[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_EXPRESSION_REPLACEMENTS = {"^": "**", "×": "*", "÷": "/", "−": "-", "—": "-", "·": "*"}


def _check_size(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ToolError("expression must evaluate to a number")
    if isinstance(x, int) and x.bit_length() > MAX_INT_BITS:
        raise ToolError("result too large")
    if isinstance(x, float) and not math.isfinite(x):
        raise ToolError("result is not a finite number")
    return x


def _safe_pow(base, exp):
    if isinstance(base, int) and isinstance(exp, int) and exp > 0 and abs(base) > 1:
        if exp * math.log2(abs(base)) > MAX_INT_BITS:
            raise ToolError("result too large")
    if isinstance(exp, float) and abs(exp) > 1e4:
        raise ToolError("exponent too large")
    return base ** exp


def _eval_node(node):
    if isinstance(node, ast.Expression):
        return _eval_node(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ToolError(f"unsupported constant {node.value!r}")
        return _check_size(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN_OPS:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow):
            return _check_size(_safe_pow(left, right))
        return _check_size(_BIN_OPS[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_OPS:
        return _check_size(_UNARY_OPS[type(node.op)](_eval_node(node.operand)))
    if isinstance(node, ast.Name) and node.id in MATH_CONSTANTS:
        return MATH_CONSTANTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MATH_FUNCTIONS:
        name, most = node.func.id, 2 if node.func.id in TWO_ARGUMENTS else 1
        if node.keywords or not 1 <= len(node.args) <= most:
            raise ToolError(f"{name} takes {'1 or 2 arguments' if most == 2 else 'one argument'}")
        args = [_eval_node(a) for a in node.args]
        return _check_size(MATH_FUNCTIONS[name](*args))
    raise ToolError(f"unsupported syntax: {type(node).__name__}")


def _format_number(x):
    """9472 -> "9472"; 2.5 -> "2.5"; 1/3 -> "0.3333333333" (10 significant digits, but never fewer than
    the integer part has: 12345678901.5 -> "12345678901.5")."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    if isinstance(x, float):
        return f"{x:.10g}" if abs(x) < 1e10 else repr(x)
    return str(x)


def evaluate_expression(expression: str) -> str:
    """Evaluate arithmetic safely; raise ToolError with a hint the model can act on."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    # powers written as superscripts: NFKC alone would fold 10² into the number 102
    text = SUPERSCRIPT_RUN.sub(lambda m: "**(" + m.group(0).translate(SUPERSCRIPTS) + ")", expression)
    text = unicodedata.normalize("NFKC", text)
    for old, new in _EXPRESSION_REPLACEMENTS.items():
        text = text.replace(old, new)
    text = text.strip().rstrip("=").strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        hint = "use * for multiplication" if re.search(r"\d\s*[xX]\s*\d", text) else \
            "use numbers, + - * / ** % and parentheses"
        raise ToolError(f"invalid expression: {expression[:80]}", hint=hint) from None
    try:
        return _format_number(_eval_node(tree))
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except (OverflowError, ValueError, TypeError, RecursionError):
        raise ToolError("math error: the expression has no finite numeric value") from None
