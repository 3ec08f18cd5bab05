"""A real headless browser for the views' tests and benchmark: Debian's chromium driven by Selenium through
the system's chromedriver (nothing is downloaded), with a fresh profile, no network (offline, and every
request sent to a closed local port) and its console log kept."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time

DRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--window-size=1400,900",
         "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>")


def missing() -> str | None:
    """Why no browser test can run here (None: chromium and its driver are installed)."""
    if not (shutil.which("chromium") and os.path.exists(DRIVER)):
        return "the Debian packages chromium and chromium-driver are not installed"
    return None


@contextlib.contextmanager
def browser():
    """A Selenium Chrome driver on a fresh profile, the network switched off."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="mechsym-chromium-")
    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


READY = """const gd = document.getElementById('view');
return !!(window.Plotly && gd && gd._fullLayout && gd.calcdata && gd.calcdata.length);"""


def open_view(driver, path, timeout=60.0) -> float:
    """Load the view page `path` and wait until plotly has drawn it; returns the seconds it took."""
    start = time.perf_counter()
    driver.get("file://" + os.path.abspath(path))
    while not driver.execute_script(READY):
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"the view '{path}' was not drawn within {timeout} s")
        time.sleep(0.02)
    return time.perf_counter() - start


def errors(driver) -> list:
    """The console's errors (JavaScript errors, failed loads) since the last call."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
