"""torchvision's MNIST transform, as seed 004's example ran it, for the as-written mnist-cnn loop.

The example hands each training image to `transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,),
(0.3081,))])` as a PIL image. An earlier suite wrote the two transforms out as the few tensor operations they end
in; the output was the same, but on one H100 machine each image took 88 microseconds against torchvision's
122 to 135, in the example's single DataLoader worker, which does nothing else. What costs the difference is
torchvision's own bookkeeping around those operations: an API-usage log call per transform, the scripting and
tracing checks, type checks, the `(std == 0).any()` guard (two tensor operations), and Normalize being an
`nn.Module` called through `Module.__call__`.

So this module does what torchvision's `Compose`, `ToTensor`, `Normalize` and the functions behind them do for a
mode-'L' PIL image, step for step, checks included, and no more: the suite needs only Pillow, not torchvision
(which is built against one torch release). tests/benchmarks/fidelity.py times the seed's transcription, which uses
torchvision itself where it is installed, against this.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import FunctionType
from typing import Any

import numpy as np
import torch
from torch import nn

# PIL modes that ToTensor reads as other than uint8 (torchvision's table, rebuilt on every call as it does).
_WIDE_MODES = (("I", np.int32), ("I;16" if sys.byteorder == "little" else "I;16B", np.int16), ("F", np.float32))


def _log_api_usage(obj: Any) -> None:
    """torchvision's `_log_api_usage_once`: one PyTorch API-usage event per transform call (a no-op logger unless
    an application installs one, but the key is built and the call made every time, as there)."""
    module = obj.__module__
    if not module.startswith("torchvision"):
        module = f"torchvision.internal.{module}"
    name = obj.__name__ if isinstance(obj, FunctionType) else obj.__class__.__name__
    torch._C._log_api_usage_once(f"{module}.{name}")


def _not_compiling() -> bool:
    return not torch.jit.is_scripting() and not torch.jit.is_tracing()


def _is_pil_image(img: Any) -> bool:
    from PIL import Image

    return isinstance(img, Image.Image)


def _is_numpy(img: Any) -> bool:
    return isinstance(img, np.ndarray)


def _num_channels(img: Any) -> int:
    """`get_image_num_channels` for a PIL image."""
    if _is_pil_image(img):
        return len(img.getbands()) if hasattr(img, "getbands") else img.channels
    raise TypeError(f"Unexpected type {type(img)}")


def to_tensor(pic: Any) -> torch.Tensor:
    """`transforms.functional.to_tensor` for a PIL image: a (C, H, W) float tensor in [0, 1]. The suite hands it
    only PIL images, so torchvision's ndarray and accimage branches are left out; their checks stay."""
    if _not_compiling():
        _log_api_usage(to_tensor)
    if not (_is_pil_image(pic) or _is_numpy(pic)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if _is_numpy(pic):
        raise TypeError("only PIL images reach this transform in the suite")
    default_float_dtype = torch.get_default_dtype()
    mode_to_nptype = dict(_WIDE_MODES)
    img = torch.from_numpy(np.array(pic, mode_to_nptype.get(pic.mode, np.uint8), copy=True))
    if pic.mode == "1":
        img = 255 * img
    img = img.view(pic.size[1], pic.size[0], _num_channels(pic))
    img = img.permute((2, 0, 1)).contiguous()  # HWC to CHW
    if isinstance(img, torch.ByteTensor):
        return img.to(dtype=default_float_dtype).div(255)
    return img


def normalize(tensor: torch.Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> torch.Tensor:
    """`transforms.functional.normalize` and the tensor kernel it calls, guards included."""
    if _not_compiling():
        _log_api_usage(normalize)
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.ndim >= 2:
        raise TypeError("Tensor is not a torch image.")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected a tensor image of size (..., C, H, W). Got tensor.size() = {tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean_t = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    std_t = torch.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std_t == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean_t.ndim == 1:
        mean_t = mean_t.view(-1, 1, 1)
    if std_t.ndim == 1:
        std_t = std_t.view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)


class ToTensor:
    """`transforms.ToTensor()`."""

    def __init__(self) -> None:
        _log_api_usage(self)

    def __call__(self, pic: Any) -> torch.Tensor:
        return to_tensor(pic)


class Normalize(nn.Module):
    """`transforms.Normalize(mean, std)`: a module, so every call goes through `nn.Module.__call__`."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        super().__init__()
        _log_api_usage(self)
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        return normalize(tensor, self.mean, self.std, self.inplace)


class Compose:
    """`transforms.Compose(transforms)`."""

    def __init__(self, transforms: list[Callable[[Any], Any]]) -> None:
        if _not_compiling():
            _log_api_usage(self)
        self.transforms = transforms

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img


def mnist_transform(mean: float, std: float) -> Compose:
    """The example's `transforms.Compose([transforms.ToTensor(), transforms.Normalize((mean,), (std,))])`."""
    return Compose([ToTensor(), Normalize((mean,), (std,))])
