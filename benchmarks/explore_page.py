"""The size of viz.explore's page, the time to write it and the time to open it, for the copy model and a GPT.

    python benchmarks/explore_page.py                          # runs/copy.npz if it exists, else a fresh model
    python benchmarks/explore_page.py --checkpoint runs/copy.npz --out /tmp/pages
    python benchmarks/explore_page.py --screenshot docs/images/explore.png    # the picture in README.md and docs/seeing_backprop.md

Pages: the copy task's model (one example, as `minigrad explore copy` writes it, and a training batch
of 64), and the GPT of tests/torch_code/nanogpt_style.py (nanoGPT's style, `torch` bound to minigrad;
its default configuration, one sequence of its block size) with both attention paths. "write" is
explore's whole run: forward, backward, the check of every op, and writing the file. "open" is the
time headless Chromium takes from loading the file to the end of the page's first render (median of
3), where Chromium and chromedriver are installed (Debian: apt-get install chromium chromium-driver).
With --screenshot, the copy model's page is also photographed as a learner would leave it: the
encoder's self-attention opened, its softmax selected.
"""
import argparse
import importlib.util
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad import viz
from minigrad_models.training import Trainer, default_checkpoint

ROOT = Path(__file__).resolve().parent.parent


def copy_model(checkpoint, batch_size):
    if checkpoint and os.path.exists(checkpoint):
        trainer = Trainer.resume(checkpoint, task="copy")
        trainer.task.rng = np.random.default_rng(0)
        what = f"copy, trained ({trainer.step} steps)"
    else:
        trainer = Trainer("copy")
        what = "copy, untrained"
    trainer.train_config.batch_size = batch_size
    return f"{what}, batch {batch_size}", trainer.model, lambda: trainer.loss_on_batch()[0]


def gpt_model(flash):
    spec = importlib.util.spec_from_file_location("nanogpt_style", ROOT / "tests" / "torch_code" / "nanogpt_style.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    gpt = module.build(mg)
    mg.manual_seed(0)
    config = gpt.GPTConfig(flash=flash)
    model = gpt.GPT(config)
    rng = np.random.default_rng(0)
    idx, targets = (mg.tensor(rng.integers(0, config.vocab_size, (1, config.block_size))) for _ in range(2))
    style = "F.scaled_dot_product_attention" if flash else "masked_fill + softmax"
    return (f"GPT of tests/torch_code ({config.n_layer} layers, {config.n_head} heads, n_embd {config.n_embd}, "
            f"T {config.block_size}; {style})"), model, lambda: model(idx, targets)


def chromium():
    """A headless Chromium driven by Selenium, or None where Chromium or chromedriver is missing."""
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    driver_path = shutil.which("chromedriver")
    if not (browser and driver_path):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(driver_path), options=options)


def wait_until_ready(driver):
    while driver.execute_script("return document.body && document.body.dataset.ready") != "1":
        time.sleep(0.005)


def screenshot(page, png):
    from selenium.webdriver.common.by import By

    driver = chromium()
    if driver is None:
        raise SystemExit("--screenshot needs Chromium and chromedriver (apt-get install chromium chromium-driver)")
    try:
        driver.get(Path(page).resolve().as_uri())
        wait_until_ready(driver)
        for module in ("encoder", "encoder.layers.0", "encoder.layers.0.self_attn"):
            driver.find_element(By.CSS_SELECTOR, f'g.unit.group[data-path="{module}"]').click()
        driver.find_element(By.CSS_SELECTOR, "g.unit.op[data-op=Softmax]").click()
        driver.save_screenshot(str(png))
    finally:
        driver.quit()


def open_seconds(path, repeats=3):
    """Median seconds from loading the page to the end of its first render, or None without Chromium."""
    driver = chromium()
    if driver is None:
        return None
    try:
        times = []
        for _ in range(repeats):
            driver.get("about:blank")
            start = time.perf_counter()
            driver.get(Path(path).resolve().as_uri())
            wait_until_ready(driver)
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=default_checkpoint("copy"), help="the copy model (default runs/copy.npz)")
    parser.add_argument("--out", help="folder for the pages (default: a temporary one)")
    parser.add_argument("--screenshot", help="also save a screenshot of the copy model's page (PNG) here")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    cases = [copy_model(args.checkpoint, 1), copy_model(args.checkpoint, 64), gpt_model(False), gpt_model(True)]
    print("| page | ops | size | write (forward, backward, checks, file) | open in Chromium |")
    print("|---|---|---|---|---|")
    for k, (what, model, loss_fn) in enumerate(cases):
        path = out / f"page{k}.html"
        report = viz.explore(loss_fn, path, model=model)
        opened = open_seconds(path)
        checks = "all checks passed" if not report.failed and not report.unchecked else str(report)
        print(f"| {what} | {report.n_ops} ({checks}) | {report.size / 1e6:.2f} MB | {report.seconds:.2f} s | "
              + (f"{opened:.2f} s |" if opened is not None else "no Chromium |"), flush=True)
    if args.screenshot:
        screenshot(out / "page0.html", args.screenshot)
        print(f"saved {args.screenshot}")


if __name__ == "__main__":
    main()
