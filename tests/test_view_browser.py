"""The view of a planar mechanism in a real headless browser (tests/browser.py: Debian's chromium through
Selenium and the system's chromedriver, the network switched off): the page that `mechsym view fourbar`
writes loads without the network and logs no JavaScript error; the slider, clicked on its rail at three
positions, makes plotly draw the linkage at those samples: the points plotly computed for each body's
trace and the markers it put in the SVG, read back from the page, equal the kinematics table computed here
on the other backend (numpy), to 1e-6 of the view's span (the SVG to its hundredth of a pixel); the cursor
beside it equals the inverse table's torque. A page built to draw sample k+1 at position k fails the check."""
import copy
import time

import numpy as np
import pytest

from browser import browser, errors, missing, open_view

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

SAMPLES, OMEGA = 72, 10.0
POSITIONS = (7, 30, 61)

DRAWN = """const gd = document.getElementById('view');
const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, out = {};
gd._fullData.forEach((t, i) => {
  const layer = document.querySelectorAll('.scatterlayer .trace')[i];
  const markers = layer ? [...layer.querySelectorAll('.points path.point')].map(p => {
      const m = /translate\\(([-\\d.e]+),\\s*([-\\d.e]+)\\)/.exec(p.getAttribute('transform'));
      return [parseFloat(m[1]), parseFloat(m[2])]; }) : [];
  out[t.name] = {text: t.text, xaxis: t.xaxis, calc: gd.calcdata[i].map(p => [p.x, p.y]), svg: markers};
});
return {traces: out, active: gd._fullLayout.sliders[0].active,
        x: [xa.range[0], xa.range[1], xa._offset, xa._length], y: [ya.range[0], ya.range[1], ya._offset, ya._length]};"""


@pytest.fixture(scope="module")
def reference():
    """The kinematics and the inverse table of the four-bar at the view's samples, on the numpy backend."""
    from mechsym import derive, load_mechanism

    system = derive(load_mechanism("fourbar"), backend="numpy")
    theta = 2 * np.pi * np.arange(SAMPLES) / SAMPLES
    return system, system.kinematics_table(theta), system.inverse(theta, OMEGA)


def move_slider(driver, k, steps):
    """Click the slider's rail where step k lies (plotly's rail: 10 px inset at each end) and wait until the
    slider stands there and plotly has drawn that frame."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    rail = driver.find_element(By.CSS_SELECTOR, ".slider-rail-touch-rect")
    width = rail.rect["width"]
    offset = 10 + (width - 20) * k / (steps - 1) - width / 2
    ActionChains(driver).move_to_element_with_offset(rail, int(round(offset)), 0).click().perform()
    for _ in range(1000):  # 20 s at most, for a loaded machine
        if driver.execute_script("const gd = document.getElementById('view'), t = gd._transitionData; return "
                                 "gd._fullLayout.sliders[0].active === arguments[0] && !t?._frameWaitingCnt "
                                 "&& !t?._frameQueue?.length && !t?._animationRaf", k):
            break
        time.sleep(0.02)
    driver.execute_script("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def drawn_errors(driver, reference, k):
    """(largest error of the computed points / span, of the SVG markers in pixels, of the cursor / its
    panel's span) of the linkage and the cursor drawn at slider position k against the tables at sample k."""
    system, kin, inv = reference
    page = driver.execute_script(DRAWN)
    assert page["active"] == k, f"the slider stands at {page['active']}, not {k}"
    (x0, x1, xo, xl), (y0, y1, yo, yl) = page["x"], page["y"]
    span = max(x1 - x0, y1 - y0)
    calc = svg = 0.0
    for body in system.mechanism.moving_bodies:
        trace = page["traces"][body]
        names = [t.rpartition("point ")[2] for t in trace["text"]]
        assert set(names) == set(system.mechanism.bodies[body].points), (body, names)
        want = np.array([[kin[f"{p}.x"][k], kin[f"{p}.y"][k]] for p in names])
        calc = max(calc, np.abs(np.array(trace["calc"]) - want).max() / span)
        pixels = np.column_stack([(want[:, 0] - x0) / (x1 - x0) * xl, (y1 - want[:, 1]) / (y1 - y0) * yl])
        svg = max(svg, np.abs(np.array(trace["svg"]) - pixels).max())
    cursor = page["traces"]["torque now"]["calc"][0]
    torque = inv["torque"]
    cursor_error = max(abs(cursor[0] - kin["theta"][k]) / (2 * np.pi), abs(cursor[1] - torque[k]) / np.ptp(torque))
    return calc, svg, cursor_error


def check_view(path, reference):
    """Open the page, move the slider to each of POSITIONS; the largest errors there, and the console's errors."""
    with browser() as driver:
        open_view(driver, path)
        steps = driver.execute_script("return document.getElementById('view')._fullLayout.sliders[0].steps.length")
        assert steps == SAMPLES
        found = []
        for k in POSITIONS:
            move_slider(driver, k, steps)
            found.append(drawn_errors(driver, reference, k))
        offline = driver.execute_script("return navigator.onLine")
        return np.max(found, axis=0), errors(driver), offline


def test_slider_draws_the_kinematics_table(tmp_path, reference):
    from mechsym.app.cli import main

    path = tmp_path / "fourbar.html"
    assert main(["view", "fourbar", "--samples", str(SAMPLES), "--omega", str(OMEGA), "--out", str(path)]) == 0
    text = path.read_text()
    assert "<script src=" not in text and "cdn" not in text.lower().split("<body>")[0]  # plotly inlined
    (calc, svg, cursor), logged, online = check_view(path, reference)
    assert not online  # the page was drawn with the network off
    assert logged == []
    assert calc <= 1e-6, calc
    assert svg <= 0.011, svg  # plotly writes SVG coordinates to a hundredth of a pixel
    assert cursor <= 1e-6, cursor


def test_a_page_drawing_the_next_sample_fails_the_check(tmp_path, reference):
    """The check above can fail: a page whose frame k holds sample k+1 is caught."""
    system = reference[0]
    fig = system.view(table=reference[2], positions=reference[1])
    frames = list(fig.frames)
    shifted = [copy.deepcopy(f) for f in frames]
    for f, later in zip(shifted, frames[1:] + frames[:1]):
        f.data = later.data
    fig.frames = shifted
    path = tmp_path / "broken.html"
    from mechsym.core.view import write_html

    write_html(fig, path)
    (calc, svg, cursor), logged, _ = check_view(path, reference)
    assert logged == []
    assert calc > 100 * 1e-6 and svg > 1.0 and cursor > 100 * 1e-6, (calc, svg, cursor)


LINKS = """const gd = document.getElementById('view');
const t = gd._fullData.find(d => d.name === 'links'), s = gd._fullLayout.scene;
return {x: t.x, y: t.y, z: t.z, text: t.text, active: gd._fullLayout.sliders[0].active,
        span: Math.max(...['xaxis', 'yaxis', 'zaxis'].map(a => s[a].range[1] - s[a].range[0]))};"""


def test_a_tree_run_is_drawn_at_pinocchio_placements(tmp_path):
    """HyQ through five poses: the links that plotly's 3-D scene holds after the slider moved lie at
    Pinocchio's frame placements to 1e-6 of the scene's span, with no JavaScript error."""
    pin = pytest.importorskip("pinocchio")
    from mechanisms import hyq
    from mechsym.core.results import Table
    from mechsym.core.view import write_html

    system = hyq.system()
    rng = np.random.default_rng(5)
    q = np.tile(hyq.standing(), (5, 1))
    q[:, 7:] += rng.uniform(-0.4, 0.4, (5, 12))
    q[:, 2] += np.linspace(0, 0.3, 5)
    path = tmp_path / "hyq.html"
    write_html(system.view(table=Table({"t": np.arange(5) * 0.1, **{n: q[:, i] for i, n in
                                                                    enumerate(system.coordinate_names)}})), path)
    model = pin.buildModelFromUrdf(str(hyq.URDF), pin.JointModelFreeFlyer())
    data = model.createData()
    with browser() as driver:
        open_view(driver, path)
        for k in (1, 4, 2):
            move_slider(driver, k, 5)
            page = driver.execute_script(LINKS)
            assert page["active"] == k
            pin.framesForwardKinematics(model, data, q[k])
            drawn = [(n, x, y, z) for n, x, y, z in zip(page["text"], page["x"], page["y"], page["z"]) if n]
            want = np.array([data.oMf[model.getFrameId(n)].translation for n, *_ in drawn])
            assert np.abs(np.array([d[1:] for d in drawn]) - want).max() <= 1e-6 * page["span"]
        assert errors(driver) == []
