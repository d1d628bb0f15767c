"""Contributing a result: what a person does with the file `benchsite run` wrote.

- `submit`: `benchsite submit`, the file checked by the gate and put on a branch for a pull request;
- `standing`: `benchsite compare`, where this machine stands against every published machine.
"""
