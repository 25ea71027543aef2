# SPDX-License-Identifier: MIT
"""tenure-check --html: the page of a history with a planted violation
shows that violation, with its rule and the events involved drawn in red,
when a real browser renders it; a clean history shows no violation."""
import os
import subprocess
import tempfile

from conftest import TN_BIN, console_errors, screenshot
from selenium.webdriver.common.by import By

SAMPLES = os.path.abspath(os.path.join(os.environ.get("TN_SRC", "."), "tests",
                                       "check"))


def check_html(sample):
    out = tempfile.NamedTemporaryFile(suffix=".html", delete=False).name
    r = subprocess.run([os.path.join(TN_BIN, "tenure-check"), "--html", out,
                        sample], cwd=SAMPLES, stdout=subprocess.PIPE,
                       check=False)
    return r.returncode, out


def test_check_html__shows_a_planted_sink_violation(browser):
    rc, page = check_html("viol-sink_below_mark.jsonl")
    assert rc == 1
    with open(page, encoding="utf-8") as f:
        html = f.read()
    assert "src=" not in html and "href=" not in html  # nothing external
    browser.get("file://" + page)
    v = browser.find_element(By.CSS_SELECTOR,
                             'li.violation[data-violation="sink_below_mark"]')
    assert v.is_displayed()
    assert "sink_below_mark" in v.text and "line " in v.text
    verdict = browser.find_element(By.ID, "verdict")
    assert verdict.get_attribute("data-valid") == "false"
    red = browser.find_elements(By.CSS_SELECTOR,
                                "#timeline .mark.violating, "
                                "#timeline .grant.violating")
    assert red, "no event of the violation is drawn in red"
    assert browser.find_elements(By.CSS_SELECTOR,
                                 '#timeline .mark[data-decision="admit"]')
    assert console_errors(browser) == []
    screenshot(browser, "check-html-violation")
    os.unlink(page)


def test_check_html__shows_an_overlapping_grant(browser):
    rc, page = check_html("viol-overlapping_grant.jsonl")
    assert rc == 1
    browser.get("file://" + page)
    assert browser.find_element(
        By.CSS_SELECTOR,
        'li.violation[data-violation="overlapping_grant"]').is_displayed()
    bars = browser.find_elements(By.CSS_SELECTOR, "#timeline g.grant.violating")
    assert {b.get_attribute("data-token") for b in bars} >= {"1", "2"}
    os.unlink(page)


def test_check_html__shows_a_session_lease_overlap(browser):
    # A lease under a session is drawn to its session's end (the TTL of
    # the session's last renew), and the grant inside it in red.
    rc, page = check_html("viol-overlapping_grant--session-renew.jsonl")
    assert rc == 1
    browser.get("file://" + page)
    assert browser.find_element(
        By.CSS_SELECTOR,
        'li.violation[data-violation="overlapping_grant"]').is_displayed()
    bars = browser.find_elements(By.CSS_SELECTOR, "#timeline g.grant.violating")
    assert {b.get_attribute("data-token") for b in bars} >= {"1", "2"}
    assert console_errors(browser) == []
    os.unlink(page)


def test_check_html__clean_history_has_no_violation(browser):
    rc, page = check_html("clean-basic.jsonl")
    assert rc == 0
    browser.get("file://" + page)
    assert browser.find_element(By.ID, "verdict").get_attribute(
        "data-valid") == "true"
    assert browser.find_elements(By.CSS_SELECTOR, "li.violation") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#timeline g.grant")
    assert console_errors(browser) == []
    os.unlink(page)
