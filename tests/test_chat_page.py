"""The chat page in a real browser: headless Chromium asks the shipped agent a question through the page, and
the page shows the call, the tool's result and the answer. Skipped, with the reason, where no Chromium is
installed (.ci/run installs Debian's chromium and chromium-driver where it can).

CHAT_SCREENSHOT=docs/chat.png python -m pytest tests/test_chat_page.py -s   # also saves a picture of it
"""
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (CHROMIUM and CHROMEDRIVER):
    pytest.skip("no Chromium with chromedriver on this machine (Debian: apt-get install chromium chromium-driver)",
                allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tests.test_server import free_port  # noqa: E402

# (request, tool, what the result and the answer must hold): one call, and a chained one (rate -> calculator)
EXCHANGES = [("北京现在天气怎么样?", ["get_current_weather"], "28°C"),
             ("我有 200 美元,按现在的汇率能换多少人民币?", ["get_exchange_rate", "calculate_math"], "1442")]


SERVER_START_S = 300


@pytest.fixture(scope="module")
def server():
    """The real server script with the shipped checkpoints, fp32 so that greedy replies are the same on every
    CPU, on a free loopback port."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "scripts/serve_openai_api.py", "--weight", "agent", "full_sft",
                             "--port", str(port), "--dtype", "float32", "--device", "cpu"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVER_START_S  # loading two checkpoints on a busy 2-core machine is slow
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the server did not start:\n" + proc.stdout.read())
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the server did not answer /health within {SERVER_START_S} s:\n"
                                   + proc.stdout.read())
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1100,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def ask(browser, text):
    box = browser.find_element(By.CSS_SELECTOR, "[data-testid=input]")
    box.send_keys(text)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=send]").click()
    WebDriverWait(browser, 120).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=send]").is_enabled()
        and d.find_elements(By.CSS_SELECTOR, ".turn"))


def test_the_page_shows_the_calls_their_results_and_the_answer(server, browser):
    t0 = time.perf_counter()
    browser.get(server + "/")
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#examples button"))
    load_s = time.perf_counter() - t0
    assert browser.find_element(By.ID, "model").get_attribute("value") == "agent"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#tools input:checked")) == 6
    for request, tools, truth in EXCHANGES:
        browser.find_element(By.ID, "clear").click()
        ask(browser, request)
        assert not browser.find_elements(By.CSS_SELECTOR, "[data-testid=error]"), \
            browser.find_element(By.CSS_SELECTOR, "[data-testid=error]").text
        cards = browser.find_elements(By.CSS_SELECTOR, "[data-testid=tool-card]")
        assert [c.get_attribute("data-tool") for c in cards] == tools
        assert all("done" in c.get_attribute("class") for c in cards)
        assert truth in cards[-1].find_element(By.CSS_SELECTOR, "[data-testid=tool-result]").text
        answers = browser.find_elements(By.CSS_SELECTOR, "[data-testid=answer]")
        assert len(answers) == len(tools) + 1 and truth in answers[-1].text  # call(s) -> answer from the result
    timings = browser.execute_script("return window.chatTimings")
    print(f"\nchat page: first load {load_s * 1000:.0f} ms (page script done at "
          f"{timings['pageLoadedMs']:.0f} ms); first streamed token after each request "
          f"{[round(t) for t in timings['firstTokenMs']]} ms")
    if os.environ.get("CHAT_SCREENSHOT"):
        browser.save_screenshot(os.environ["CHAT_SCREENSHOT"])


def test_errors_are_said_in_words(server, browser):
    browser.get(server + "/")
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#examples button"))
    browser.execute_script("const o = document.createElement('option'); o.textContent = 'nope';"
                           "document.getElementById('model').appendChild(o);"
                           "document.getElementById('model').value = 'nope';")
    ask(browser, "hello")
    error = browser.find_element(By.CSS_SELECTOR, "[data-testid=error]").text
    assert "The model 'nope' does not exist" in error
    browser.find_element(By.ID, "clear").click()
    browser.execute_script("window.fetch = () => Promise.reject(new TypeError('Failed to fetch'));")  # down
    ask(browser, "hello")
    assert "server is down or unreachable" in browser.find_element(By.CSS_SELECTOR, "[data-testid=error]").text
