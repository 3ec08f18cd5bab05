import cProfile, pstats, numpy as np, time
from mechanisms import hyq_contact
hyq_contact.simulate("drop", t_end=0.01)
cProfile.run("run, table = hyq_contact.simulate('drop', mu=0.8)", "/tmp/prof3")
print(run.stats["wall"])
pstats.Stats("/tmp/prof3").sort_stats("cumtime").print_stats(40)
