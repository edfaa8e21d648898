"""The page of viz.explore in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`,
which .ci/run installs), driven by Selenium. Where either is missing these tests skip, saying which.

They click as a learner would: open modules down to an attention block, open its softmax, read the
panel (formula, shapes, check), step through the backward walk, open the attention view, and look at
screenshots. A page with a deliberately wrong backward shows that op's check as failed.
"""
import io
import re
import shutil
import time

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import engine, viz
from minigrad.kernels.softmax import Softmax
from minigrad.viz.formulas import formulas
from minigrad_models.training import Trainer
from test_explore import BadScale, ScaledMLP

webdriver = pytest.importorskip("selenium.webdriver", reason="Selenium is not installed (the `test` extra installs it)")
from selenium.webdriver.common.by import By  # noqa: E402


def chromium():
    """(browser, driver) paths, or None where Chromium or chromedriver is missing."""
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def browser():
    found = chromium()
    if found is None:
        pytest.skip("headless Chromium and chromedriver are not installed "
                    "(apt-get install chromium chromium-driver; .ci/run installs them)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(found[1]), options=options)  # the driver given: nothing downloaded
    yield driver
    driver.quit()


def copy_trainer():
    return Trainer("copy", train_overrides=dict(batch_size=1))


@pytest.fixture(scope="module")
def copy_page(tmp_path_factory):
    """The page of one example through a fresh copy-task model, and the engine's own walk of the same step."""
    trainer = copy_trainer()
    path = tmp_path_factory.mktemp("explore") / "copy.html"
    viz.explore(lambda: trainer.loss_on_batch()[0], path, model=trainer.model)
    again = copy_trainer()  # the same seed: the same example and weights
    with viz.record_modules(again.model):
        loss = again.loss_on_batch()[0]
    with viz.trace_backward() as trace:
        loss.backward()
    return path, trainer, [(e.op, e.module) for e in trace]


def open_page(driver, path):
    driver.get(path.as_uri())
    deadline = time.time() + 30
    while driver.execute_script("return document.body.dataset.ready") != "1":
        assert time.time() < deadline, "the page never finished its first render"
        time.sleep(0.05)
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def click_group(driver, path):
    """Open the closed module box with this dotted path; afterwards it is drawn open."""
    driver.find_element(By.CSS_SELECTOR, f'g.unit.group[data-path="{path}"]').click()
    assert driver.find_elements(By.CSS_SELECTOR, f'g.box[data-path="{path}"]')
    assert not driver.find_elements(By.CSS_SELECTOR, f'g.unit.group[data-path="{path}"]')


def panel(driver):
    return driver.find_element(By.ID, "panel")


def picture(png):
    """The screenshot as an (H, W, 3) array."""
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int16)


def test_open_a_module_down_to_the_softmax_of_an_attention_block(browser, copy_page):
    path, trainer, _ = copy_page
    open_page(browser, path)
    assert not browser.find_elements(By.CSS_SELECTOR, "g.unit.op[data-op=Softmax]")  # all inside closed modules
    for module in ("encoder", "encoder.layers.0", "encoder.layers.0.self_attn"):
        click_group(browser, module)
    (softmax,) = browser.find_elements(By.CSS_SELECTOR, "g.unit.op[data-op=Softmax]")  # the decoder's stay closed
    softmax.click()
    text = panel(browser).text
    assert text.startswith("Softmax")
    assert "module encoder.layers.0.self_attn" in text

    # the formula: the very comment that opens Softmax.backward in minigrad/kernels/softmax.py
    source_comment = next(line.strip().lstrip("# ") for line in formulas(Softmax).backward_source.splitlines()
                          if line.strip().startswith("#"))
    formula = panel(browser).find_element(By.CSS_SELECTOR, ".formula-backward .mono").text
    assert formula == source_comment

    # the shapes: one example, 4 heads, 10 positions attending to 10
    heads, T = trainer.model_config.num_heads, trainer.task.length
    shapes = [cell.text.replace("\n", " ") for cell in panel(browser).find_elements(By.CSS_SELECTOR, "td.shape")]
    assert shapes == [f"(1, {heads}, {T}, {T})", "", f"(1, {heads}, {T}, {T})"]  # input, dim, output
    dtypes = panel(browser).find_element(By.CSS_SELECTOR, "table.io").text
    assert "float32" in dtypes and "dim" in dtypes

    # its check passed, and its value is drawn: one heatmap per head
    check = panel(browser).find_element(By.CSS_SELECTOR, ".check")
    assert "passed" in check.get_attribute("class").split()
    assert re.search(r"check passed: .* (\d+) derivatives compared", check.text)
    assert len(panel(browser).find_elements(By.CSS_SELECTOR, "canvas")) >= 2 * heads  # value and gradient per head

    # the attention view lines up Q, K, V, scores, weights and output, each with its gradient
    browser.find_element(By.ID, "open-attention").click()
    view = browser.find_element(By.ID, "attention-view")
    roles = [th.get_attribute("data-role") for th in view.find_elements(By.CSS_SELECTOR, "th[data-role]")]
    assert roles == ["query", "key", "value", "scores", "weights", "output"]
    assert len(view.find_elements(By.CSS_SELECTOR, "tr.values canvas")) == 6
    assert len(view.find_elements(By.CSS_SELECTOR, "tr.grads canvas")) == 6
    view.find_element(By.CSS_SELECTOR, "button.close").click()
    assert not view.is_displayed()


def test_step_through_the_backward_walk_in_the_engines_order(browser, copy_page):
    path, _, walk = copy_page
    open_page(browser, path)
    position = browser.find_element(By.ID, "walk-pos")
    assert position.text == "not started"
    seen = []
    for k in range(12):
        browser.find_element(By.ID, "walk-next").click()
        assert position.text == f"step {k + 1} / {len(walk)}"
        heading = panel(browser).find_element(By.TAG_NAME, "h2").text
        info = panel(browser).find_element(By.CSS_SELECTOR, ".walkinfo").text
        assert info.startswith(f"step {k + 1} of {len(walk)}: the gradient arrives at")
        current = browser.find_elements(By.CSS_SELECTOR, "g.unit.current")
        assert len(current) == 1
        seen.append((heading.split()[0], panel(browser).text))
    assert [op for op, _ in seen] == [op for op, _ in walk[:12]]
    for (_, text), (_, module) in zip(seen, walk[:12]):
        assert f"module {module or 'top level'}" in text
    browser.find_element(By.ID, "walk-prev").click()
    assert position.text == f"step 11 / {len(walk)}"
    assert panel(browser).find_element(By.TAG_NAME, "h2").text.split()[0] == walk[10][0]
    # the steps so far are marked as visited in the graph; the edges into the current op carry its gradient on
    assert browser.find_elements(By.CSS_SELECTOR, "g.unit.visited")
    assert browser.find_elements(By.CSS_SELECTOR, "path.edge.flow")


def test_search_opens_the_module_it_finds(browser, copy_page):
    path, _, _ = copy_page
    open_page(browser, path)
    box = browser.find_element(By.ID, "search")
    box.send_keys("multihead_attn")
    hits = browser.find_elements(By.CSS_SELECTOR, "#search-results li")
    assert hits and "decoder.layers.0.multihead_attn" in hits[0].text
    hits[0].click()
    assert browser.find_elements(By.CSS_SELECTOR, 'g.box[data-path="decoder.layers.0.multihead_attn"]')
    assert panel(browser).find_element(By.TAG_NAME, "h2").text.startswith("multihead_attn: MultiheadAttention")


def test_a_screenshot_is_neither_blank_nor_unchanged_by_a_click(browser, copy_page):
    path, _, _ = copy_page
    open_page(browser, path)
    before = picture(browser.get_screenshot_as_png())
    colours = len(np.unique(before.reshape(-1, 3), axis=0))
    assert colours > 50 and before.std() > 20  # text, boxes, edges in several colours: not a blank page
    click_group(browser, "decoder")
    after = picture(browser.get_screenshot_as_png())
    assert after.shape == before.shape
    changed = np.any(np.abs(after - before) > 16, axis=2).mean()
    assert changed > 0.02, f"only {changed:.2%} of the pixels changed when the decoder was opened"


def test_a_wrong_backward_shows_as_a_failed_check_in_the_browser(browser, tmp_path):
    mg.manual_seed(0)
    model = ScaledMLP(BadScale)
    x = mg.randn(5, 4)
    viz.explore(lambda: F.mse_loss(model(x), mg.zeros(5, 2)), tmp_path / "bad.html", model=model)
    open_page(browser, tmp_path / "bad.html")
    assert "1 FAILED" in browser.find_element(By.ID, "summary").text
    browser.find_element(By.CSS_SELECTOR, "#check-list li.failed a").click()
    assert panel(browser).find_element(By.TAG_NAME, "h2").text.startswith("BadScale")
    check = panel(browser).find_element(By.CSS_SELECTOR, ".check")
    assert "failed" in check.get_attribute("class").split()
    assert re.search(r"check FAILED: input #0 .* analytic .* numeric", check.text)
    failed = browser.find_elements(By.CSS_SELECTOR, "g.unit.failed")
    assert [u.get_attribute("data-op") for u in failed] == ["BadScale"]


def open_softmax(driver):
    """Open the modules down to the encoder's attention block and click its softmax; returns its step."""
    for module in ("encoder", "encoder.layers.0", "encoder.layers.0.self_attn"):
        click_group(driver, module)
    driver.find_element(By.CSS_SELECTOR, "g.unit.op[data-op=Softmax]").click()
    return int(re.search(r"backward step (\d+) of", panel(driver).text).group(1))


def test_next_and_prev_move_from_the_selected_op(browser, copy_page):
    """Issue 35: "next" started from step 1 whatever op was selected."""
    path, _, walk = copy_page
    open_page(browser, path)
    step = open_softmax(browser)
    assert walk[step - 1][0] == "Softmax" and step > 3
    position = browser.find_element(By.ID, "walk-pos")
    browser.find_element(By.ID, "walk-next").click()
    assert position.text == f"step {step + 1} / {len(walk)}"
    assert panel(browser).find_element(By.TAG_NAME, "h2").text.split()[0] == walk[step][0]
    for back in (1, 2):
        browser.find_element(By.ID, "walk-prev").click()
        assert position.text == f"step {step + 1 - back} / {len(walk)}"
    assert panel(browser).find_element(By.TAG_NAME, "h2").text.split()[0] == walk[step - 2][0]
    # an op of the walk selected from the panel's links moves the starting point with it
    links = panel(browser).find_elements(By.CSS_SELECTOR, "a.link")
    on_walk = [k for k, n in enumerate(browser.execute_script("return explore.data.nodes")) if n.get("step")]
    link = next(a for a in links if int(a.text.rsplit("#", 1)[1]) in on_walk)
    link.click()
    chosen = int(re.search(r"backward step (\d+) of", panel(browser).text).group(1))
    browser.find_element(By.ID, "walk-next").click()
    assert position.text == f"step {chosen + 1} / {len(walk)}"


def test_an_op_opened_from_the_attention_view_comes_to_the_front(browser, copy_page):
    """Issue 35: an op clicked in the attention view opened under it, and the view had to be closed by hand."""
    path, _, _ = copy_page
    open_page(browser, path)
    open_softmax(browser)
    browser.find_element(By.ID, "open-attention").click()
    view = browser.find_element(By.ID, "attention-view")
    assert view.is_displayed()
    link = view.find_element(By.CSS_SELECTOR, 'th[data-role="weights"] a.link')
    label = link.text
    link.click()
    assert not view.is_displayed()
    heading = panel(browser).find_element(By.TAG_NAME, "h2")
    assert heading.text.endswith("#" + label.rsplit("#", 1)[1])
    # what is drawn at the heading's place is the heading: nothing lies over it
    on_top = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);", heading)
    assert browser.execute_script("return arguments[0].contains(arguments[1])", heading, on_top)
