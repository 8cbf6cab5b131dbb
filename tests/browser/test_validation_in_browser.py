"""The Validation page in headless Chromium, against the real server: a validation made
by ``simulator validate``, whose points and table rows open their simulated traces."""
import driving as drive
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from validation_runs import write_validation

pytestmark = pytest.mark.browser

@pytest.fixture(scope="module")
def validation_url(tmp_path_factory, serve_traces):
    directory = tmp_path_factory.mktemp("validation-browser")
    write_validation(tmp_path_factory.mktemp("validation-input"), directory / "val")
    return serve_traces(directory)


def _points(browser):
    return browser.find_elements(By.CSS_SELECTOR, "#val-graph .scatterlayer .point")


def test_a_point_and_a_table_link_open_the_rows_trace(browser, validation_url):
    browser.get(f"{validation_url}/validation?run=val")
    drive.wait(browser, lambda d: len(_points(d)) == 2, "the two rows were not drawn")
    assert "Spearman" in drive.text(browser, "val-figures")
    assert "k.cl:scale" in drive.text(browser, "val-families")

    ActionChains(browser).move_to_element(_points(browser)[1]).pause(0.3).click().perform()
    drive.wait(browser, lambda d: drive.path(d) == "/overview", "clicking a point did not"
               " open its trace")
    opened = drive.query(browser)["trace"]
    assert opened.startswith("val/row-002") and opened.endswith(".sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gs-chart-title"),
               "the trace's Overview did not draw")

    browser.back()
    drive.wait(browser, lambda d: len(_points(d)) == 2, "Back did not return to the page")
    drive.click(browser, By.CSS_SELECTOR, "#val-table .gs-val-kernel")
    drive.wait(browser, lambda d: drive.path(d) == "/kernel", "the kernel link did not open")
    assert drive.query(browser)["trace"].startswith("val/row-001")
    browser.back()
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#val-table .gs-val-open"),
               "Back did not return to the table")
    drive.click(browser, By.CSS_SELECTOR, "#val-table .gs-val-open")
    drive.wait(browser, lambda d: drive.path(d) == "/overview"
               and drive.query(d)["trace"].startswith("val/row-001"),
               "the table's overview link did not open its trace")
