# SPDX-License-Identifier: MIT
"""The operator console (GET /ui) in a real headless chromium against a real
tenured: it loads cleanly, follows leases live from the event stream, shows
expiries in the feed, force-releases for an admin and shows a refusal for
anyone else, and shows nothing before a valid bearer token is given."""
import time

from conftest import console_errors, screenshot
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

# How long a change may take to show: the bound for a lease
# acquired through the API to appear.
SHOWS_WITHIN_S = 2.0


def lease_row(name, token=None):
    sel = 'tr[data-lease="%s"]' % name
    if token is not None:
        sel += '[data-token="%d"]' % token
    return (By.CSS_SELECTOR, sel)


def open_console(drv, server):
    drv.get(server.base + "/ui")
    WebDriverWait(drv, 10).until(
        EC.visibility_of_element_located((By.ID, "app")))
    WebDriverWait(drv, 10).until(lambda d: d.find_element(
        By.ID, "stat-stream").get_attribute("data-stream") == "up")


def acquire(server, name, ttl_ms=30000, bearer=None, owner="indexer-17",
            **extra):
    status, body = server.call("POST", "/v1/leases",
                               {"name": name, "owner_id": owner,
                                "ttl_ms": ttl_ms, **extra}, bearer=bearer)
    assert status == 201, body
    return body


def test_console__loads_without_console_errors(server, browser):
    open_console(browser, server)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(
        By.ID, "stat-ready").get_attribute("data-ready") == "ready")
    assert browser.find_element(By.ID, "login").is_displayed() is False
    assert console_errors(browser) == []


def test_console__files_carry_a_strict_policy(server):
    import urllib.request
    for path, kind in (("/ui", "text/html"), ("/ui/console.js",
                                                "text/javascript"),
                       ("/ui/console.css", "text/css")):
        with urllib.request.urlopen(server.base + path, timeout=10) as r:
            assert r.status == 200
            assert r.headers["Content-Type"].startswith(kind)
            csp = r.headers["Content-Security-Policy"]
            assert "default-src 'none'" in csp and "frame-ancestors 'none'" \
                in csp, csp
            assert "unsafe" not in csp
            assert r.headers["X-Content-Type-Options"] == "nosniff"
    status, body = server.call("GET", "/ui/nothing.js")
    assert status == 404 and body["error"] == "not_found"


def test_console__lease_appears_live_and_leaves_on_release(server, browser):
    open_console(browser, server)
    t0 = time.monotonic()
    g = acquire(server, "shard:8841")
    WebDriverWait(browser, SHOWS_WITHIN_S).until(
        EC.presence_of_element_located(lease_row("shard:8841", g["token"])))
    shown_s = time.monotonic() - t0
    print("lease shown %.3f s after the acquire was sent" % shown_s)
    row = browser.find_element(*lease_row("shard:8841"))
    WebDriverWait(browser, 5).until(lambda d: "indexer-17" in row.text and
                                    " s" in row.text)
    acquire(server, "shard:8842", ttl_ms=60000, owner="indexer-04",
            lock_delay_ms=5000)
    WebDriverWait(browser, SHOWS_WITHIN_S).until(
        EC.presence_of_element_located(lease_row("shard:8842")))
    WebDriverWait(browser, 5).until(lambda d: "5.0 s" in d.find_element(
        *lease_row("shard:8842")).text)  # its lock-delay
    screenshot(browser, "console-leases")
    status, _ = server.call("DELETE", "/v1/leases/shard:8841",
                            {"token": g["token"],
                             "lease_secret": g["lease_secret"]})
    assert status == 204
    WebDriverWait(browser, SHOWS_WITHIN_S).until(
        EC.invisibility_of_element_located(lease_row("shard:8841")))
    feed = browser.find_element(By.ID, "feed")
    assert feed.find_elements(By.CSS_SELECTOR,
                              'li[data-type="released"][data-event-id]')
    assert console_errors(browser) == []


def test_console__expiry_shows_in_the_feed(server, browser):
    open_console(browser, server)
    g = acquire(server, "job:exp", ttl_ms=300)
    WebDriverWait(browser, 10).until(EC.presence_of_element_located(
        (By.CSS_SELECTOR, 'li[data-type="expired"][data-event-id]')))
    entry = browser.find_element(By.CSS_SELECTOR, 'li[data-type="expired"]')
    assert "job:exp" in entry.text and "token=%d" % g["token"] in entry.text
    WebDriverWait(browser, 5).until(
        EC.invisibility_of_element_located(lease_row("job:exp")))


def test_console__feed_pauses_and_resumes(server, browser):
    open_console(browser, server)
    browser.find_element(By.ID, "pause").click()
    acquire(server, "p:1")
    WebDriverWait(browser, 5).until(
        EC.presence_of_element_located(lease_row("p:1")))
    assert browser.find_elements(By.CSS_SELECTOR,
                                 'li[data-type="acquired"]') == []
    assert "1 waiting" in browser.find_element(By.ID, "paused-count").text
    browser.find_element(By.ID, "pause").click()
    assert len(browser.find_elements(By.CSS_SELECTOR,
                                     'li[data-type="acquired"]')) == 1


def test_console__name_page_draws_the_timeline(server, browser):
    open_console(browser, server)
    g1 = acquire(server, "shard:7")
    server.call("DELETE", "/v1/leases/shard:7",
                {"token": g1["token"], "lease_secret": g1["lease_secret"]})
    g2 = acquire(server, "shard:7", owner="indexer-04")
    browser.get(server.base + "/ui#/lease/shard%3A7")
    WebDriverWait(browser, 10).until(EC.presence_of_element_located(
        (By.CSS_SELECTOR, '#detail-timeline g.grant[data-token="%d"]'
         % g2["token"])))
    ended = browser.find_element(
        By.CSS_SELECTOR, 'g.grant[data-token="%d"]' % g1["token"])
    assert ended.get_attribute("data-end") == "released"
    live = browser.find_element(
        By.CSS_SELECTOR, 'g.grant[data-token="%d"]' % g2["token"])
    assert live.get_attribute("data-end") == "live"
    screenshot(browser, "console-timeline")


def login(drv, server, token):
    drv.get(server.base + "/ui")
    WebDriverWait(drv, 10).until(
        EC.visibility_of_element_located((By.ID, "login")))
    drv.find_element(By.ID, "login-token").send_keys(token)
    drv.find_element(By.CSS_SELECTOR, "#login-form button").click()


def force_release(drv, name):
    row = drv.find_element(*lease_row(name))
    row.find_element(By.CSS_SELECTOR, 'button[data-action="force"]').click()
    row = drv.find_element(*lease_row(name))
    row.find_element(By.CSS_SELECTOR, 'button[data-action="confirm"]').click()


def test_console__nothing_shown_before_a_valid_bearer(auth_server, browser):
    acquire(auth_server, "shard:secret", bearer=auth_server.tokens.admin)
    browser.get(auth_server.base + "/ui")
    WebDriverWait(browser, 10).until(
        EC.visibility_of_element_located((By.ID, "login")))
    assert not browser.find_element(By.ID, "app").is_displayed()
    assert "shard:secret" not in browser.page_source
    screenshot(browser, "console-login")
    login(browser, auth_server, "not-a-valid-token")
    WebDriverWait(browser, 10).until(EC.text_to_be_present_in_element(
        (By.ID, "login-error"), "refused"))
    assert not browser.find_element(By.ID, "app").is_displayed()
    assert "shard:secret" not in browser.page_source
    login(browser, auth_server, auth_server.tokens.viewer)
    WebDriverWait(browser, 10).until(
        EC.presence_of_element_located(lease_row("shard:secret")))
    # the token lives in this tab's sessionStorage, never in the URL
    assert auth_server.tokens.viewer not in browser.current_url
    assert browser.get_cookies() == []
    assert browser.execute_script(
        "return sessionStorage.getItem('tenure.bearer')") == \
        auth_server.tokens.viewer


def test_console__force_release_refused_without_the_right(auth_server,
                                                           browser):
    g = acquire(auth_server, "shard:stuck", bearer=auth_server.tokens.admin)
    login(browser, auth_server, auth_server.tokens.viewer)
    WebDriverWait(browser, 10).until(
        EC.presence_of_element_located(lease_row("shard:stuck")))
    force_release(browser, "shard:stuck")
    WebDriverWait(browser, 10).until(lambda d: d.find_element(
        By.ID, "notice").get_attribute("data-state") == "refused")
    assert "refused" in browser.find_element(By.ID, "notice").text
    screenshot(browser, "console-force-refused")
    status, body = auth_server.call("GET", "/v1/leases/shard:stuck",
                                    bearer=auth_server.tokens.admin)
    assert status == 200 and body["token"] == g["token"]


def test_console__force_release_by_an_admin(auth_server, browser):
    g = acquire(auth_server, "shard:stuck", bearer=auth_server.tokens.admin)
    login(browser, auth_server, auth_server.tokens.admin)
    WebDriverWait(browser, 10).until(
        EC.presence_of_element_located(lease_row("shard:stuck")))
    force_release(browser, "shard:stuck")
    WebDriverWait(browser, 10).until(
        EC.invisibility_of_element_located(lease_row("shard:stuck")))
    WebDriverWait(browser, 10).until(EC.presence_of_element_located(
        (By.CSS_SELECTOR, 'li[data-type="revoked"][data-event-id]')))
    status, _ = auth_server.call("GET", "/v1/leases/shard:stuck",
                                 bearer=auth_server.tokens.admin)
    assert status == 404
    status, body = auth_server.call(
        "GET", "/v1/leases/shard:stuck/check?token=%d" % g["token"],
        bearer=auth_server.tokens.admin)
    assert status == 200 and body["current"] is False
