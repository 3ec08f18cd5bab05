"""The command line on top of the library: `mechsym COMMAND ...` (cli), its option groups and the writer of
a command's outputs (options), the warm repeat of an inverse command (warm), `mechsym sweep` (sweep_cli)
and the model registry (registry), the only part of mechsym that reaches the shipped models (mechanisms/).
The shipped models' own commands build their options from mechsym.app.options."""
