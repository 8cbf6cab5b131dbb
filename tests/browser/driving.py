"""Driving the app in headless Chromium: what every browser test needs.

Pages are rebuilt from the URL, so an element read or clicked a moment ago may be gone:
waits ignore stale elements, and a click is tried again until it lands.
"""
from urllib.parse import parse_qs, urlparse

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 30  # seconds; only a failing test waits this long


def wait(browser, predicate, message, timeout=WAIT):
    """What ``predicate(browser)`` returns once it is truthy; fails with ``message``."""
    return WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,)) \
        .until(lambda d: predicate(d), message=message)


def query(browser):
    """The current URL's query parameters (the first value of each)."""
    return {k: v[0] for k, v in parse_qs(urlparse(browser.current_url).query).items()}


def path(browser):
    return urlparse(browser.current_url).path


def text(browser, element_id):
    """The text of the element with ``element_id`` ("" if there is none), read in one
    script: the element may be redrawn between a find and a read."""
    return browser.execute_script(
        "var e = document.getElementById(arguments[0]); return e ? e.textContent : '';",
        element_id)


def click(browser, by, selector):
    """Click an element, again if the page was rebuilt under it (the URL just changed)."""
    def clicked(d):
        d.execute_script("arguments[0].click();", d.find_element(by, selector))
        return True
    wait(browser, clicked, f"could not click {selector}")
