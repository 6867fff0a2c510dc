"""The MLflow UI as a researcher opens it: headless Chromium (Debian's chromium and its driver,
through Selenium) against a real ``mlflow ui`` on a free 127.0.0.1 port, over a store a real sweep
and its report made. Nothing is configured in the browser: every page is the link lincls prints.

With ``LINCLS_DOCS_SCREENSHOTS=1`` the screenshots go to docs/ (the README shows them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from clusters import free_port, start, stop, wait_until
from conftest import ROOT, run_cli
from mlflow.tracking import MlflowClient

from lincls import tracking

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("browser"),
    pytest.mark.skipif(
        CHROMIUM is None or DRIVER is None,
        reason="needs Debian's chromium and chromium-driver (make system installs them as root)",
    ),
]
GRID = ["learner.bias=none,feature", "dataset.margin=0.05,0.2", "seed=0,1"]
TINY = ["dataset.n=200", "dataset.d=2", "dataset.n_test=50", "passes=5"]


def _text(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").text


def _wait_for(driver, check, what: str, timeout: float = 60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what}: not seen within {timeout:.0f} s; page: {_text(driver)[:1500]}")


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    tmp = tmp_path_factory.mktemp("browser")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    done = run_cli(["-m", *GRID, *TINY, f"tracking.uri={uri}",
                    f"hydra.sweep.dir={tmp / 'sweep'}"], cwd=tmp)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = subprocess.run(
        [sys.executable, "-m", "experiments.report", "--tracking-uri", uri, "--out",
         str(tmp / "report")],
        cwd=tmp, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.get_experiment_by_name("lincls").experiment_id
    runs = client.search_runs([experiment_id])
    parent = next(r for r in runs if r.data.tags.get("lincls.role") == "sweep")
    child = next(r for r in runs if r.data.tags.get("lincls.role") == "run")
    port = free_port()
    server = start(  # what `lincls ui` runs: MLflow's server as the lincls app
        [str(Path(sys.executable).with_name("mlflow")), "server", "--app-name", "lincls",
         "--backend-store-uri", uri, "--default-artifact-root", tracking.artifact_root(uri),
         "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        tmp / "mlflow-ui.log",
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/"

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(base + "health", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1900,1100"):  # fmt: skip
        options.add_argument(flag)
    driver = None
    try:
        wait_until(healthy, "mlflow ui", 120, (server,), tmp / "mlflow-ui.log")
        driver = webdriver.Chrome(service=Service(DRIVER), options=options)
        yield {
            "driver": driver, "base": base, "experiment": experiment_id, "uri": uri,
            "parent": parent, "child": child, "shots": _shots(tmp),
        }  # fmt: skip
    finally:
        if driver is not None:
            driver.quit()
        stop(server)


def _shots(tmp: Path) -> Path:
    folder = ROOT / "docs" if os.environ.get("LINCLS_DOCS_SCREENSHOTS") == "1" else tmp
    folder.mkdir(exist_ok=True)
    return folder


def test_clicking_the_experiment_on_a_first_visit_opens_its_runs_not_the_genai_pages(ui):
    from selenium.webdriver.common.by import By

    driver = ui["driver"]
    driver.get(ui["base"])
    driver.execute_script("window.localStorage.clear()")  # a browser that never came here
    driver.get(ui["base"])
    stored = driver.execute_script("return window.localStorage.getItem('mlflow.workflowType_v1')")
    assert stored == '"machine_learning"'
    link = _wait_for(
        driver,
        lambda: [a for a in driver.find_elements(By.TAG_NAME, "a") if a.text.strip() == "lincls"],
        "the lincls experiment on the home page",
    )
    link[0].click()
    _wait_for(driver, lambda: "adhoc" in _text(driver), "the sweep's run in the runs table")
    page = _text(driver)
    assert "Model training" in page and "Runs" in page
    assert f"/experiments/{ui['experiment']}/runs" in driver.current_url
    # a choice the researcher makes is kept: the page sets the default only when none is stored
    driver.execute_script("window.localStorage.setItem('mlflow.workflowType_v1', '\"genai\"')")
    driver.get(ui["base"])
    stored = driver.execute_script("return window.localStorage.getItem('mlflow.workflowType_v1')")
    assert stored == '"genai"'
    driver.execute_script("window.localStorage.clear()")


def test_the_printed_link_opens_the_runs_table_with_names_that_show_gamma_and_r(ui):
    from selenium.webdriver.common.by import By

    driver = ui["driver"]
    driver.get(ui["base"] + tracking.ui_path(ui["experiment"]))
    _wait_for(driver, lambda: "bound_ratio.tightest" in _text(driver), "the lincls columns")
    assert "Model training" in _text(driver) and "Runs" in _text(driver)
    expand = _wait_for(
        driver,
        lambda: driver.find_elements(
            By.CSS_SELECTOR, "button[data-component-id$='runnamecellrenderer.tsx_46']"
        ),
        "the sweep's row",
    )
    expand[0].click()  # the sweep's runs, nested under it

    def names():
        return [a.text for a in driver.find_elements(By.TAG_NAME, "a") if " γ=" in a.text]

    shown = _wait_for(driver, lambda: len(names()) == 8 and names(), "8 run names")
    assert all(" R=" in name and name.startswith("perceptron[") for name in shown)
    driver.save_screenshot(str(ui["shots"] / "ui-runs.png"))


def test_the_parent_run_says_its_headline(ui):
    driver, parent = ui["driver"], ui["parent"]
    page = f"#/experiments/{ui['experiment']}/runs/{parent.info.run_id}"
    driver.get(ui["base"] + page + "?workflowType=machine_learning")
    text = _wait_for(driver, lambda: "bound violations" in _text(driver) and _text(driver),
                     "the parent's description")  # fmt: skip
    assert "8 runs finished, 0 failed" in text and "0 bound violations" in text
    assert "sweep.violations" in text
    driver.save_screenshot(str(ui["shots"] / "ui-sweep.png"))


def test_the_html_report_artifact_shows_its_plots(ui):
    from selenium.webdriver.common.by import By

    driver, parent = ui["driver"], ui["parent"]
    page = (
        f"#/experiments/{ui['experiment']}/runs/{parent.info.run_id}/artifacts/report/report.html"
    )
    driver.get(ui["base"] + page + "?workflowType=machine_learning")
    frame = _wait_for(driver, lambda: driver.find_elements(By.TAG_NAME, "iframe"), "the viewer")
    driver.switch_to.frame(frame[0])
    try:
        widths = _wait_for(
            driver,
            lambda: driver.execute_script(
                "return Array.from(document.images).map(i => i.naturalWidth)"
            ),
            "the report's images",
        )
        assert len(widths) >= 4 and min(widths) > 0
    finally:
        driver.switch_to.default_content()
    driver.save_screenshot(str(ui["shots"] / "ui-report.png"))


def test_a_run_charts_its_cumulative_mistakes_beside_its_bound(ui):
    from selenium.webdriver.common.by import By

    driver, child = ui["driver"], ui["child"]
    page = f"#/experiments/{ui['experiment']}/runs/{child.info.run_id}/model-metrics"
    driver.get(ui["base"] + page + "?workflowType=machine_learning")
    search = _wait_for(
        driver,
        lambda: driver.find_elements(By.CSS_SELECTOR, "input[placeholder='Search metric charts']"),
        "the chart search",
    )
    search[0].send_keys("cumulative_mistakes")
    _wait_for(driver, lambda: "cumulative_mistakes_bound" in _text(driver), "the bound's chart")
    assert "cumulative_mistakes\n" in _text(driver) + "\n"
    plots = _wait_for(
        driver, lambda: driver.find_elements(By.CSS_SELECTOR, ".js-plotly-plot"), "the charts drawn"
    )
    assert len(plots) == 2
    time.sleep(1)  # the lines' last frame
    driver.save_screenshot(str(ui["shots"] / "ui-run-charts.png"))


def test_the_chart_tab_draws_each_run_s_cumulative_mistakes_over_its_bound(ui):
    from selenium.webdriver.common.by import By

    driver = ui["driver"]
    driver.get(ui["base"] + tracking.ui_path(ui["experiment"]))
    expand = _wait_for(
        driver,
        lambda: driver.find_elements(
            By.CSS_SELECTOR, "button[data-component-id$='runnamecellrenderer.tsx_46']"
        ),
        "the sweep's row",
    )
    expand[0].click()  # its runs shown: the charts draw every visible run
    chart_tab = _wait_for(
        driver,
        lambda: driver.find_elements(By.CSS_SELECTOR, "input[name='runs-view-mode'][value=CHART]"),
        "the Chart tab",
    )
    driver.execute_script("arguments[0].click()", chart_tab[0])  # the radio input is styled over
    _wait_for(driver, lambda: "Mistakes and their bounds" in _text(driver), "the bounds section")
    legends = _wait_for(
        driver,
        lambda: "(cumulative_mistakes_b" in _text(driver) and "(lemma.mistakes)" in _text(driver),
        "the bound series in the charts' legends",
    )
    assert legends
    page = _text(driver)
    assert "(cumulative_mistakes)" in page and "(lemma.progress)" in page
    assert "Mistakes and their bounds (2)" in page.replace("\n", " ")
    driver.save_screenshot(str(ui["shots"] / "ui-chart-overlay.png"))
