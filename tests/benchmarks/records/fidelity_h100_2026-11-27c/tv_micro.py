"""Per-image cost of seed 004's MNIST transform: torchvision itself vs benchsite's step-for-step copy.

Run on the device from the repository root, PYTHONPATH holding it (as .devstate/fid.sh set it). The code as run,
reformatted only (imports one a line, no semicolons) so that the repository's lint passes.
"""

import inspect
import time

import torch
import torchvision
from PIL import Image
from torchvision import transforms
from torchvision.transforms import functional as TF
from torchvision.utils import _log_api_usage_once

from runner.frameworks.torch import vision

print("torchvision", torchvision.__version__, "torch", torch.__version__, "threads", torch.get_num_threads())
for obj in (
    TF.to_tensor,
    TF.normalize,
    transforms.Normalize.forward,
    transforms.ToTensor.__call__,
    transforms.Compose.__call__,
):
    print("-----", obj.__qualname__)
    print(inspect.getsource(obj))
try:
    from torchvision.transforms import _functional_tensor as FT

    print("-----", "FT.normalize")
    print(inspect.getsource(FT.normalize))
except Exception as e:
    print("no FT", e)
print("-----", "_log_api_usage_once")
print(inspect.getsource(_log_api_usage_once))

N = 60000
data = torch.randint(0, 256, (N, 28, 28), dtype=torch.uint8)
tv = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
bs = vision.mnist_transform(0.1307, 0.3081)
a, b = tv(Image.fromarray(data[0].numpy(), mode="L")), bs(Image.fromarray(data[0].numpy(), mode="L"))
assert torch.equal(a, b)


def one_pass(t):
    start = time.perf_counter()
    for i in range(N):
        t(Image.fromarray(data[i].numpy(), mode="L"))
    return (time.perf_counter() - start) / N * 1e6


res = {"torchvision": [], "benchsite": []}
for r in range(4):
    for name, t in (("torchvision", tv), ("benchsite", bs)) if r % 2 == 0 else (("benchsite", bs), ("torchvision", tv)):
        res[name].append(one_pass(t))
        print(f"round {r} {name}: {res[name][-1]:.1f} us/image", flush=True)
print("| per image us |", {k: [round(v, 1) for v in vs] for k, vs in res.items()})
