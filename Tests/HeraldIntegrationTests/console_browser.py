"""Drives the newsroom console in headless Chromium (Debian's chromium and chromedriver, Selenium
from PyPI), as an editor would, printing one line of JSON per scenario with what the page showed.
ConsoleBrowserTests runs it against a real herald api and herald worker and checks each line
against the API.

    console_browser.py BASE_URL SEND_CONNECTION LISTEN_CONNECTION MANAGE_CONNECTION SCREENSHOTS SCENARIO [ARGS...]
    console_browser.py BASE_URL SEND_CONNECTION LISTEN_CONNECTION MANAGE_CONNECTION SCREENSHOTS session

Scenarios: signin, compose, preview, send ID, stop ID, watch ID STATE, correct ID, lookup KIND VALUE,
alerts, deadletters OFFSET PARTITION [HUB]. `session` runs the scenarios read from standard input,
one JSON array ["scenario", "arg", ...] per line, one after another in one browser (each starts
on a freshly loaded console: the page keeps its session in memory only); a scenario that fails
prints {"scenario": ..., "failure": "why"} and the session goes on. The errors the page logged
during a scenario (a Content-Security-Policy violation, an uncaught exception, a failed load)
are in its line's "browserErrors".
"""

import json
import os
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

# An upper bound for what a page waits on, far beyond what any step takes (seconds): the
# Swift side waits on progress; a browser step that takes this long is stuck.
PATIENCE = 300

BASE, SEND, LISTEN, MANAGE, SCREENSHOTS, SCENARIO = sys.argv[1:7]
ARGS = sys.argv[7:]


def browser(width=1280):
    options = Options()
    options.binary_location = os.environ.get("HERALD_TEST_CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},1000", "--lang=en-US"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("HERALD_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


def wait(driver, what, condition, timeout=PATIENCE):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2).until(lambda d: condition(d))
    except TimeoutException:
        shot(driver, "stuck")
        raise SystemExit(f"console_browser: {SCENARIO}: no {what} after {timeout} s")


def by_id(driver, name):
    return driver.find_element(By.ID, name)


def text(driver, name):
    """An element's rendered text, read in one script call (the page redraws parts of itself as
    data streams in, so an element found one call earlier may be gone)."""
    return (driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.innerText : ''", name) or "").strip()


def visible(driver, name):
    return bool(driver.execute_script(
        "const e = document.getElementById(arguments[0]);"
        "return !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'", name))


def shot(driver, name):
    os.makedirs(SCREENSHOTS, exist_ok=True)
    driver.save_screenshot(os.path.join(SCREENSHOTS, f"{name}.png"))


def type_into(driver, name, value):
    field = by_id(driver, name)
    field.clear()
    field.send_keys(value)


def sign_in(driver, connection, hub=""):
    """Signs in by keyboard alone: the fields typed into, Enter submits."""
    driver.get(BASE.rstrip("/") + "/console/")
    wait(driver, "sign-in form", lambda d: visible(d, "signin-connection"))
    type_into(driver, "signin-connection", connection)
    type_into(driver, "signin-hub", hub)
    by_id(driver, "signin-hub").send_keys(Keys.ENTER)


def signed_in(driver, connection=SEND, hub=""):
    sign_in(driver, connection, hub)
    wait(driver, "signed-in page", lambda d: visible(d, "app") and text(d, "session-info") != "")


def go(driver, route):
    driver.execute_script("window.location.hash = arguments[0]", route)


def fill_properties(driver, rows):
    """rows: (language, name, value); adds a row per language beyond the first."""
    for index, (language, name, value) in enumerate(rows):
        if not driver.find_elements(By.ID, f"prop-name-{index}"):
            by_id(driver, "compose-add-language").click()
            wait(driver, f"property row {index}", lambda d: visible(d, f"prop-name-{index}"))
        type_into(driver, f"prop-lang-{index}", language)
        type_into(driver, f"prop-name-{index}", name)
        type_into(driver, f"prop-value-{index}", value)


LANGUAGES = [("English", "News", "Summit ends"), ("French", "News", "Fin du sommet"), ("Mandarin", "News", "峰会结束")]


def audience(driver):
    shown = text(driver, "compose-audience")
    digits = "".join(character for character in shown if character.isdigit())
    return int(digits) if digits else None


def confirm(driver):
    wait(driver, "confirmation dialog", lambda d: visible(d, "confirm-ok"))
    by_id(driver, "confirm-ok").click()


def compose(driver, expression, urgency="normal", event_id=""):
    go(driver, "#/compose")
    wait(driver, "compose view", lambda d: visible(d, "compose-expression"))
    type_into(driver, "compose-expression", expression)
    fill_properties(driver, LANGUAGES)
    Select(by_id(driver, "compose-urgency")).select_by_value(urgency)
    type_into(driver, "compose-id", event_id)


def send(driver, expression, urgency, event_id):
    compose(driver, expression, urgency, event_id)
    by_id(driver, "compose-send").click()
    confirm(driver)
    link = wait(driver, "link to the sent alert",
                lambda d: (d.find_elements(By.CSS_SELECTOR, "#compose-result a") or [None])[0])
    link.click()
    wait(driver, "alert page", lambda d: visible(d, "alert-page") and text(d, "alert-id") == event_id)


def counts(driver):
    """The counts table as {platform: {outcome: number}}, read in one script call: the table is
    redrawn as the alert's status streams in, so elements found one call earlier may be gone."""
    return driver.execute_script("""
        const table = {};
        for (const cell of document.querySelectorAll("#alert-counts [data-platform][data-outcome]")) {
            const digits = (cell.textContent || "").replace(/[^0-9]/g, "");
            (table[cell.dataset.platform] ??= {})[cell.dataset.outcome] = Number(digits || 0);
        }
        return table;""")


def scenario(driver):
    if SCENARIO == "signin":
        sign_in(driver, LISTEN)
        wait(driver, "refusal of the Listen key", lambda d: text(d, "signin-error") != "")
        refused = text(driver, "signin-error")
        signed_in(driver)
        return {"listenRefused": refused, "session": text(driver, "session-info"), "signedIn": visible(driver, "app")}

    if SCENARIO == "compose":
        signed_in(driver)
        go(driver, "#/compose")
        wait(driver, "compose view", lambda d: visible(d, "compose-expression"))
        type_into(driver, "compose-expression", "(World || ")
        wait(driver, "the expression's error", lambda d: visible(d, "compose-expression-error"))
        error = text(driver, "compose-expression-error")
        type_into(driver, "compose-expression", "World || Sports")
        wait(driver, "the error to go", lambda d: not visible(d, "compose-expression-error"))
        wait(driver, "the audience count", lambda d: audience(d) is not None)
        shot(driver, "compose")
        platforms = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#compose-audience-platforms li")]
        return {"error": error, "audience": audience(driver), "platforms": platforms}

    if SCENARIO == "preview":
        signed_in(driver)
        compose(driver, "World")
        by_id(driver, "compose-rehearse").click()
        wait(driver, "three previews", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#previews .preview")) >= 3)
        shot(driver, "previews")
        cards = [{"platform": card.get_attribute("data-platform"), "template": card.get_attribute("data-template"),
                  "text": card.text, "overLimit": bool(card.find_elements(By.CSS_SELECTOR, ".over-limit"))}
                 for card in driver.find_elements(By.CSS_SELECTOR, "#previews .preview")]
        return {"previews": cards, "audience": audience(driver)}

    if SCENARIO == "send":
        (event_id,) = ARGS
        signed_in(driver)
        send(driver, "World || Sports", "breaking", event_id)
        wait(driver, "the alert to complete and every push to be sent",
             lambda d: text(d, "alert-state").lower() == "completed"
             and counts(d).get("total", {}).get("sent", -1) == counts(d).get("total", {}).get("targets", -2))
        wait(driver, "the reach summary", lambda d: "90" in text(d, "reach-summary"))
        curves = {name: len(driver.find_elements(By.CSS_SELECTOR, f"#reach-chart .{name}"))
                  for name in ("curve-committed", "curve-sent", "reach-mark")}
        shot(driver, "alert")
        stop_disabled = driver.execute_script("return document.getElementById('alert-stop').disabled")
        # At a tablet's width the page still fits: nothing scrolls sideways.
        driver.set_window_size(768, 1000)
        overflow = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth")
        shot(driver, "alert-tablet")
        return {"state": text(driver, "alert-state").lower(), "counts": counts(driver), "reach": text(driver, "reach-summary"),
                "curves": curves, "tabletOverflow": overflow, "stopDisabled": stop_disabled}

    if SCENARIO == "stop":
        (event_id,) = ARGS
        signed_in(driver)
        send(driver, "", "normal", event_id)
        by_id(driver, "alert-stop").click()
        confirm(driver)
        wait(driver, "the stop's answer", lambda d: "Stop" in text(d, "alert-message") and "\u2026" not in text(d, "alert-message"))
        return {"message": text(driver, "alert-message"), "state": text(driver, "alert-state").lower()}

    if SCENARIO == "watch":
        event_id, state = ARGS
        signed_in(driver)
        go(driver, f"#/alerts/{event_id}")
        wait(driver, f"state {state}", lambda d: text(d, "alert-state").lower() == state)
        shot(driver, f"watch-{state}")
        return {"state": text(driver, "alert-state").lower(), "counts": counts(driver)}

    if SCENARIO == "correct":
        (event_id,) = ARGS
        signed_in(driver)
        go(driver, f"#/alerts/{event_id}")
        wait(driver, "a completed alert", lambda d: text(d, "alert-state").lower() == "completed")
        by_id(driver, "alert-correct").click()
        wait(driver, "the correction form", lambda d: visible(d, "correct-prop-value-0"))
        type_into(driver, "correct-prop-lang-0", "English")
        type_into(driver, "correct-prop-name-0", "News")
        type_into(driver, "correct-prop-value-0", "Summit ends without a deal")
        by_id(driver, "correct-submit").click()
        confirm(driver)
        link = wait(driver, "the correction's link", lambda d: (d.find_elements(By.CSS_SELECTOR, "#alert-message a") or [None])[0])
        return {"message": text(driver, "alert-message"), "correction": link.text.strip()}

    if SCENARIO == "lookup":
        kind, value = ARGS
        # Reading devices takes Listen or Manage: the operator's key, not the newsroom's.
        signed_in(driver, MANAGE)
        go(driver, "#/lookup")
        wait(driver, "look-up view", lambda d: visible(d, "lookup-value"))
        Select(by_id(driver, "lookup-kind")).select_by_value(kind)
        type_into(driver, "lookup-value", value)
        by_id(driver, "lookup-submit").click()
        wait(driver, "a result", lambda d: d.find_elements(By.CSS_SELECTOR, "#lookup-results .lookup-result"))
        return {"results": [result.text for result in driver.find_elements(By.CSS_SELECTOR, "#lookup-results .lookup-result")]}

    if SCENARIO == "alerts":
        signed_in(driver)
        go(driver, "#/alerts")
        wait(driver, "recent alerts", lambda d: d.find_elements(By.CSS_SELECTOR, "#alerts-list .alert-row"))
        return {"alerts": [row.get_attribute("data-event-id") for row in
                           driver.find_elements(By.CSS_SELECTOR, "#alerts-list .alert-row")]}

    if SCENARIO == "deadletters":
        offset, partition = ARGS[:2]
        hub = ARGS[2] if len(ARGS) > 2 else ""
        # Dead letters take a Manage key.
        signed_in(driver, MANAGE, hub)
        go(driver, "#/deadletters")
        wait(driver, "a dead letter", lambda d: d.find_elements(By.CSS_SELECTOR, "#deadletters-list .deadletter"))
        articles = driver.find_elements(By.CSS_SELECTOR, "#deadletters-list .deadletter")
        reasons = [article.find_element(By.CSS_SELECTOR, ".deadletter-reason").text.strip() for article in articles]
        article = next((article for article in articles if article.get_attribute("data-offset") == offset
                        and article.get_attribute("data-partition") == partition), None)
        if article is None:
            shot(driver, "deadletters")
            raise SystemExit(f"console_browser: {SCENARIO}: no dead letter at partition {partition}, offset {offset}")
        article.find_element(By.CSS_SELECTOR, ".deadletter-replay").click()
        confirm(driver)
        result = article.find_element(By.CSS_SELECTOR, ".deadletter-result")
        # "Replaying…" shows first (message-info); the answer is message-ok or message-error.
        wait(driver, "the replay's answer", lambda d: result.text.strip() != "" and (
            "message-ok" in result.get_attribute("class") or "message-error" in result.get_attribute("class")))
        shot(driver, "deadletters")
        links = result.find_elements(By.CSS_SELECTOR, "a")
        return {"reasons": reasons, "result": result.text.strip(), "replayed": links[0].text.strip() if links else None}

    raise SystemExit(f"console_browser: unknown scenario {SCENARIO}")


def browser_errors(driver):
    """What the page logged as SEVERE since the last call (reading the log empties it)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def run_one(driver):
    driver.set_window_size(1280, 1000)
    result = scenario(driver)
    result["browserErrors"] = browser_errors(driver)
    return result


def main():
    global SCENARIO, ARGS
    driver = browser()
    try:
        if SCENARIO != "session":
            print(json.dumps(run_one(driver), ensure_ascii=False))
            return
        for line in sys.stdin:
            if not line.strip():
                continue
            SCENARIO, *ARGS = json.loads(line)
            try:
                result = run_one(driver)
            except (SystemExit, Exception) as failure:  # noqa: BLE001 - reported, and the session goes on
                result = {"failure": str(failure) or type(failure).__name__, "browserErrors": browser_errors(driver)}
            result["scenario"] = SCENARIO
            print(json.dumps(result, ensure_ascii=False), flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
