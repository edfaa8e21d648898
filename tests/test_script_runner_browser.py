"""The page `minigrad run --explore STEP train.py` writes, opened in headless Chromium (skipped, saying
why, where Chromium, its driver or Selenium is missing; .ci/run installs them): the user's own model,
its modules under the names its code gives them, opens down to the softmax of an attention block."""
import subprocess
import sys

from selenium.webdriver.common.by import By  # noqa: F401  (test_explore_browser skips without Selenium)

from test_explore_browser import browser, click_group, open_page, panel  # noqa: F401  (the fixture)
from test_script_runner import SCRIPT_DIR, project  # noqa: F401  (the fixture)


def test_the_page_of_a_users_training_step_opens_in_chromium(browser, project):  # noqa: F811
    done = subprocess.run([sys.executable, "-m", "minigrad", "run", "--explore", "1", "train.py", "--max_iters", "1"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = project / "runs" / "explore-train-step1.html"
    open_page(browser, page)
    assert "train.py: backward() call 1" in browser.find_element(By.ID, "title").text
    for module in ("transformer.h.0", "transformer.h.0.attn"):  # the model (GPT) itself is drawn open
        click_group(browser, module)
    (softmax,) = browser.find_elements(By.CSS_SELECTOR, "g.unit.op[data-op=Softmax]")  # block 1's stays closed
    softmax.click()
    text = panel(browser).text
    assert text.startswith("Softmax") and "module transformer.h.0.attn" in text
    assert "model.py" in text and "F.softmax(att, dim=-1)" in text  # the user's own line of code
    assert "passed" in panel(browser).find_element(By.CSS_SELECTOR, ".check").get_attribute("class").split()
