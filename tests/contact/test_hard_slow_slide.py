"""The slow-slide rule of the hard-contact run (a slide slower than slow_slip is brought to rest where the
friction cone holds it) on HyQ's drop with mu = 0.8: energy never rises through a switch and what a stop
removes is the H-norm of its velocity jump (the friction work of an H-orthogonal projection); Coulomb's law
holds at every switch by the Python route's LCP at the state after it; the C and Python routes give the
same events; the frictionless run does not see the rule; the threshold is relative to the model's size."""
import numpy as np
import pytest

from mechsym.contact.box import RigidBox
from mechsym.contact.hard import HardContacts
from mechsym.contact.hard_forces import contact_forces
from mechsym.contact.hard_run import pd_hold, simulate_hard
from mechsym.contact.spatial_v2 import SLIP, STICK

MU = 0.8


@pytest.fixture(scope="module")
def drop():
    """HyQ's drop (scenario 1) through both landings, 1.1 s, mu = 0.8, on the C route: (contacts, q0, run)."""
    from mechanisms import hyq_contact

    contacts, q0 = hyq_contact.initial_state("drop")
    if contacts.c_route() is None:
        pytest.skip("needs the compiled route (a C compiler)")
    run = simulate_hard(contacts, q0, np.zeros(contacts.model.nv), 1.1, mu=MU, route="c")
    return contacts, q0, run


def switches(run, nq):
    """(t, q-, v-, q+, v+, states after) at every switch: the end of one piece and the start of the next."""
    seg = run.hybrid.segments
    for k in range(1, len(seg)):
        (qa, va), (qb, vb) = (np.split(y, [nq]) for y in (seg[k - 1].y1, seg[k].y0))
        yield seg[k].t0, qa, va, qb, vb, run.seg_states[k]


def test_energy_never_rises_through_a_switch(drop):
    contacts, _, run = drop
    model = contacts.model
    impacts = {im.t for im in run.impacts}
    stops = 0
    for t, qa, va, qb, vb, _ in switches(run, model.nq):
        before, after = model.energy(qa, va), model.energy(qb, vb)
        assert after <= before + 1e-11 * abs(before), t                 # the drift projection moves q by < 1e-12 m
        if t not in impacts:   # a projection: it removes 1/2 dv^T H dv exactly
            dv = vb - va
            assert before - after == pytest.approx(0.5 * dv @ model.mass_matrix(qb) @ dv, rel=1e-6, abs=1e-11 * abs(before))
            stops += 0.5 * dv @ model.mass_matrix(qb) @ dv > 1e-9
    assert stops >= 5                                               # slides stopped by the rule, each losing energy


def test_coulomb_at_every_switch(drop):
    """At the state after each switch the Python route's force LCP over the contacts held in contact gives
    the held states (a contact exactly on the cone's boundary, where a slip starts, may read either); every
    force lies in the pyramid; a sticking contact is at rest tangentially; a slipping one's force is on the
    pyramid's boundary and, on a fast slide, opposes its velocity."""
    contacts, q0, run = drop
    model, hold = contacts.model, pd_hold(contacts.model, q0)
    for t, _, _, q, v, held in switches(run, model.nq):
        sol = contact_forces(q, v, hold(t, q, v), contacts, mu=MU, active=held != 0, route="python", slip_tol=1.5e-6)
        lam = sol.lam
        scale = 1e-9 * max(1.0, np.max(lam[:, 0]))
        rates = contacts.jacobian(q) @ v
        margin = MU * contacts.facet_dist * lam[:, 0] - np.max(lam[:, 1:] @ contacts.facets, axis=1)
        assert np.all(margin >= -scale) and np.all(lam[:, 0] >= -scale), t
        boundary = np.abs(margin) <= 1e-6 * np.maximum(lam[:, 0], 1.0)
        assert np.all((sol.state == held) | boundary), (t, sol.state, held)
        speed = np.linalg.norm(rates[:, 1:], axis=1)
        assert np.all(speed[held == STICK] <= 1e-9), t
        assert np.all(boundary[held == SLIP]), t
        fast = (held == SLIP) & (speed > run.stats["slow_slip"])
        assert np.all(np.einsum("ij,ij->i", lam[fast, 1:], rates[fast, 1:]) <= 0), t


def slides_and_stick_switches(run):
    """(slides: runs of SLIP pieces of a contact, switches by the stick guard)."""
    states = run.seg_states
    slides = int(np.sum((states[1:] == SLIP) & (states[:-1] != SLIP)) + np.sum(states[0] == SLIP))
    return slides, sum(1 for e in run.events if e.name == "stick")


def test_slides_stop_once(drop):
    """Each slide (a contact's run of SLIP pieces) ends in at most two stick-guard switches: growing past
    the slow speed and stopping; without the rule (slow_stop=False) a slide slowing after a frictional impact
    stops and restarts in a series of ever slower slides as its direction turns."""
    contacts, q0, run = drop
    slides, stick_switches = slides_and_stick_switches(run)
    assert slides >= 8 and stick_switches <= 2 * slides
    assert sum(1 for e in run.timeline if e.kind == "slip->stick") >= 8
    off = simulate_hard(contacts, q0, np.zeros(contacts.model.nv), 1.1, mu=MU, route="c", slow_stop=False)
    slides, stick_switches = slides_and_stick_switches(off)
    assert stick_switches > 3 * slides


def test_switches_of_the_two_second_drop():
    """The 2 s drop of the benchmark: 47 switches (129 without the rule, 133 before it), its landing at
    0.451524 s, the centre of mass at rest 0.519 m high."""
    from mechanisms import hyq_contact

    run, table = hyq_contact.simulate("drop", mu=MU, t_end=2.0)
    assert run.stats["switches"] <= 60 and run.timeline[0].t == pytest.approx(0.451524, abs=1e-6)
    assert table["com.z"][-1] == pytest.approx(0.519, abs=2e-3)


def test_c_and_python_routes_give_the_same_events(drop):
    contacts, q0, run = drop
    ref = simulate_hard(contacts, q0, np.zeros(contacts.model.nv), 1.1, mu=MU, route="python")
    assert [(e.contact, e.before, e.after, e.kind) for e in run.timeline] == \
        [(e.contact, e.before, e.after, e.kind) for e in ref.timeline]
    np.testing.assert_allclose([e.t for e in run.timeline], [e.t for e in ref.timeline], rtol=0, atol=1e-8)
    assert [e.name for e in run.events] == [e.name for e in ref.events]


def test_frictionless_run_does_not_see_the_rule():
    """With mu = 0 the slow-slip threshold plays no part: any value gives the same run of the same build, bit
    for bit, with the same switches, impacts and events. (How many there are depends on the last bits of the
    integration, so on the CPU the cache is built for: the physics bounds them. Every foot lands, each
    landing an impact, and the frictionless feet then slide without the stick-slip chatter the rule is
    for, within the bound of the 2 s drop with friction.)"""
    from mechanisms import hyq_contact

    contacts, q0 = hyq_contact.initial_state("drop")
    runs = [simulate_hard(contacts, q0, np.zeros(contacts.model.nv), 2.0, slow_slip=s) for s in (3e-4, 0.3)]
    for name in runs[0].names:
        assert np.array_equal(runs[0][name], runs[1][name]), name
    counts = [(run.stats["switches"], run.stats["impacts"], run.stats["events"]) for run in runs]
    assert counts[0] == counts[1]
    switches, impacts, events = counts[0]
    assert 4 <= impacts <= switches <= 60 and events >= impacts
    assert {e.contact for e in runs[0].timeline if e.kind in ("impact", "rebound")} == set(contacts.names)


def test_threshold_relative_to_the_model():
    """The speed scale sqrt(a l): a = g for a free box, l the diagonal of its bottom corners; a box 100 times
    larger has a 10 times larger scale (the same threshold in its own units)."""
    corners = ["corner++-", "corner+--", "corner-+-", "corner---"]
    q = np.array([0, 0, 1.0, 0, 0, 0, 1])
    for k in (1.0, 100.0):
        box = RigidBox(2.0, (0.4 * k, 0.3 * k, 0.2 * k))
        scale = HardContacts(box, {n: n for n in corners}).speed_scale(q)
        assert scale == pytest.approx(np.sqrt(9.81 * 0.5 * k), rel=1e-12)
