"""The zoo: programs whose compiled training steps give the harvested kernels.

Every entry is a program written here (models are built from `transformers`,
`timm` and `torchvision` classes with configs set in code and random
weights: nothing is downloaded), a shape, a dtype and a compile mode. Its
*step* runs once under ``torch.compile``: forward, loss and backward (the
backward graph is compiled too), or an optimizer update. Each kernel that
Inductor generates for it and launches is captured
(:mod:`learned_cost.collect.inductor.harvest`).

Sizes are kept small in depth (two layers repeat the kernels of thirty) and
realistic in width, so a compile takes seconds and the kernels' shapes are
those of real layers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}


@dataclass(frozen=True)
class ZooEntry:
    """A (program, shape, dtype, mode) to harvest. ``build(shapes, dtype,
    device, mode)`` returns the step: a function of no arguments that runs
    the compiled program once per shape of ``shapes`` (forward and
    backward, or an update).

    ``sizes``: further shapes run after ``shape`` through the same compiled
    function, as a program meeting new batch or sequence sizes does. torch's
    default (automatic dynamic shapes) recompiles once with the changed
    dimensions symbolic, and that one set of kernels then serves every
    later size: the harvest captures the same generated kernel at several
    sizes, which a replay measures with one compile per config."""

    program: str
    shape: Mapping[str, int]
    dtype: str
    build: Callable[[list, str, str, str], Callable[[], Any]]
    mode: str = "default"
    needs: tuple[str, ...] = ()
    notes: str = ""
    sizes: tuple[Mapping[str, int], ...] = ()

    @property
    def shapes(self) -> list[Mapping[str, int]]:
        return [self.shape, *({**self.shape, **s} for s in self.sizes)]

    @property
    def name(self) -> str:
        dims = "-".join(f"{k}{v}" for k, v in self.shape.items())
        suffix = "" if self.mode == "default" else "-" + {"max-autotune-no-cudagraphs": "maxat"}.get(self.mode, self.mode)
        dyn = f"-dyn{len(self.sizes)}" if self.sizes else ""
        return f"{self.program}-{dims}-{self.dtype}{suffix}{dyn}"


def _torch_dtype(dtype: str):
    import torch

    return getattr(torch, DTYPES[dtype])


def _compile(fn: Callable, mode: str, sizes: int = 1) -> Callable:
    """``torch.compile`` with static shapes for one size; with several,
    torch's default automatic dynamic shapes (see :class:`ZooEntry`)."""
    import torch

    dynamic = False if sizes == 1 else None
    if mode == "default":
        return torch.compile(fn, dynamic=dynamic)
    return torch.compile(fn, mode=mode, dynamic=dynamic)


def _training_step(module: Any, make_inputs: Callable[[Mapping[str, int]], tuple], loss_of: Callable[..., Any],
                   mode: str, shapes: list) -> Callable[[], Any]:
    """Forward + loss compiled together, run once per shape; ``backward``
    runs the compiled backward graph."""
    module.train()
    inputs = [make_inputs(s) for s in shapes]

    def forward_loss(*args):
        return loss_of(module(*args), *args)

    compiled = _compile(forward_loss, mode, len(shapes))

    def step():
        loss = None
        for args in inputs:
            loss = compiled(*args)
            loss.backward()
        return loss

    return step


# ---------------------------------------------------------------- transformers
def _hf_causal_lm(config_cls: str, attn: str = "sdpa", **cfg: Any):
    def build(shapes: list, dtype: str, device: str, mode: str) -> Callable[[], Any]:
        import torch
        import transformers

        config = getattr(transformers, config_cls)(**cfg)
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation=attn)
        model = model.to(device=device, dtype=_torch_dtype(dtype))
        vocab = config.vocab_size

        def make_inputs(shape):
            ids = torch.randint(0, vocab, (shape["B"], shape["S"]), device=device)
            return (ids,)

        return _training_step(_HFLoss(model, "causal"), make_inputs, lambda out, *a: out, mode, shapes)

    return build


def _hf_model(kind: str, attn: str = "sdpa", **cfg: Any):
    """BERT and the encoders of ``_MASKED_LM_CONFIGS`` (masked LM), ViT,
    DINOv2 and the models of ``_IMAGE_CLS_CONFIGS`` (image classification;
    images of ``config.image_size``, or of ``HW`` where the shape names it),
    T5, BART and the models of ``_SEQ2SEQ_CONFIGS`` (seq2seq), wav2vec 2.0
    and the models of ``_AUDIO_CLS_CONFIGS`` (audio classification), Whisper
    (speech recognition over log-mel features), CLIP and SigLIP
    (contrastive image-text losses), SegFormer (semantic segmentation), the
    forecasters of ``_FORECAST_CONFIGS`` (MSE over the forecast horizon).

    The kinds of ``_PADDING_MASK`` also get a 2-D padding mask (every token
    kept), passed as it is or (``"additive"``) turned into the additive
    (B, 1, 1, S) mask of BERT-era models in the compiled step."""

    def build(shapes: list, dtype: str, device: str, mode: str) -> Callable[[], Any]:
        import torch
        import transformers

        if kind == "bert":
            config = transformers.BertConfig(**cfg)
            model = transformers.BertForMaskedLM._from_config(config, attn_implementation=attn)
        elif kind == "vit":
            config = transformers.ViTConfig(**cfg)
            model = transformers.ViTForImageClassification._from_config(config, attn_implementation=attn)
        elif kind == "t5":
            config = transformers.T5Config(**cfg)
            model = transformers.T5ForConditionalGeneration._from_config(config)
        elif kind == "bart":
            config = transformers.BartConfig(**cfg)
            model = transformers.BartForConditionalGeneration._from_config(config, attn_implementation=attn)
        elif kind == "dinov2":
            config = transformers.Dinov2Config(**cfg)
            model = transformers.Dinov2ForImageClassification._from_config(config, attn_implementation=attn)
        elif kind == "wav2vec2":
            config = transformers.Wav2Vec2Config(**cfg)
            model = transformers.Wav2Vec2ForSequenceClassification._from_config(config, attn_implementation=attn)
        elif kind in _MASKED_LM_CONFIGS:
            config = getattr(transformers, _MASKED_LM_CONFIGS[kind])(**cfg)
            model = transformers.AutoModelForMaskedLM.from_config(config, attn_implementation=attn)
        elif kind in _IMAGE_CLS_CONFIGS:
            config = getattr(transformers, _IMAGE_CLS_CONFIGS[kind])(**cfg)
            model = transformers.AutoModelForImageClassification.from_config(config, attn_implementation=attn)
        elif kind in _AUDIO_CLS_CONFIGS:
            config = getattr(transformers, _AUDIO_CLS_CONFIGS[kind])(**cfg)
            model = transformers.AutoModelForAudioClassification.from_config(config, attn_implementation=attn)
        elif kind == "whisper":
            config = transformers.WhisperConfig(**cfg)
            model = transformers.WhisperForConditionalGeneration._from_config(config, attn_implementation=attn)
        elif kind == "clip":
            config = transformers.CLIPConfig(**cfg)
            model = transformers.CLIPModel._from_config(config, attn_implementation=attn)
        elif kind == "siglip":
            config = transformers.SiglipConfig(**cfg)
            model = transformers.SiglipModel._from_config(config, attn_implementation=attn)
        elif kind in _SEQ2SEQ_CONFIGS:
            config = getattr(transformers, _SEQ2SEQ_CONFIGS[kind][0])(**cfg)
            model = getattr(transformers, _SEQ2SEQ_CONFIGS[kind][1])._from_config(config)
        elif kind == "segformer":
            config = transformers.SegformerConfig(**cfg)
            model = transformers.SegformerForSemanticSegmentation._from_config(config)
        elif kind in _FORECAST_CONFIGS:
            config = getattr(transformers, _FORECAST_CONFIGS[kind][0])(**cfg)
            model = getattr(transformers, _FORECAST_CONFIGS[kind][1])._from_config(config)
        else:
            raise ValueError(kind)
        model = model.to(device=device, dtype=_torch_dtype(dtype))

        def make_inputs(shape):
            b = shape["B"]
            if kind in ("vit", "dinov2") or kind in _IMAGE_CLS_CONFIGS:
                hw = shape["HW"] if "HW" in shape else config.image_size
                px = torch.randn(b, 3, hw, hw, device=device, dtype=_torch_dtype(dtype))
                return (px, torch.randint(0, config.num_labels, (b,), device=device))
            if kind == "whisper":  # B clips of log-mel frames (the length the encoder is built for), S label tokens
                mel = torch.randn(b, config.num_mel_bins, 2 * config.max_source_positions, device=device,
                                  dtype=_torch_dtype(dtype))
                return (mel, torch.randint(3, config.vocab_size, (b, shape["S"]), device=device))
            if kind in ("clip", "siglip"):  # B captions of S tokens and their B images
                size = config.vision_config.image_size
                ids = torch.randint(0, config.text_config.vocab_size, (b, shape["S"]), device=device)
                return (ids, torch.randn(b, 3, size, size, device=device, dtype=_torch_dtype(dtype)))
            if kind == "segformer":  # B images of HW x HW and their per-pixel labels
                hw = shape["HW"]
                px = torch.randn(b, 3, hw, hw, device=device, dtype=_torch_dtype(dtype))
                return (px, torch.randint(0, config.num_labels, (b, hw, hw), device=device))
            if kind in _FORECAST_CONFIGS:  # B series of C channels: the context window and the horizon after it
                dt = _torch_dtype(dtype)
                past = torch.randn(b, config.context_length, config.num_input_channels, device=device, dtype=dt)
                return (past, torch.randn(b, config.prediction_length, config.num_input_channels, device=device,
                                          dtype=dt))
            if kind == "wav2vec2" or kind in _AUDIO_CLS_CONFIGS:  # raw audio: B clips of T samples
                audio = torch.randn(b, shape["T"], device=device, dtype=_torch_dtype(dtype))
                return (audio, torch.randint(0, config.num_labels, (b,), device=device))
            ids = torch.randint(0, config.vocab_size, (b, shape["S"]), device=device)
            labels = torch.randint(0, config.vocab_size, (b, shape["S"]), device=device)
            if kind in _PADDING_MASK:
                return (ids, labels, torch.ones(b, shape["S"], device=device, dtype=torch.long))
            return (ids, labels)

        return _training_step(_HFLoss(model, kind), make_inputs, lambda out, *a: out, mode, shapes)

    return build


# encoders trained like BERT (masked LM) whose layers differ from BERT's:
# DeBERTa-v2 (disentangled relative-position attention, gathers of position
# scores), DistilBERT (no token types, fused layout), RoBERTa-style ALBERT
# (factorised embeddings, one layer shared across depth), MobileBERT
# (bottleneck projections, NoNorm: an affine map in place of LayerNorm,
# stacked feed-forward networks), ConvBERT (span-based dynamic convolution
# heads beside self-attention), Funnel (mean pooling of the sequence between
# blocks, relative-shift attention, upsampling back to every token),
# ModernBERT (local sliding-window layers between global ones, GeGLU,
# rotary positions, LayerNorm without bias), RoFormer (sinusoidal rotary
# positions applied to queries and keys in a BERT), Nystromformer (Nyström
# attention: landmarks from segment means, an iterative Moore-Penrose
# pseudo-inverse, a depthwise convolution over values), SqueezeBERT
# (grouped 1 x 1 convolutions over the sequence in place of the linear
# layers), Longformer (sliding-window attention computed over overlapping
# chunks, diagonals shifted into place)
_MASKED_LM_CONFIGS = {"deberta_v2": "DebertaV2Config", "distilbert": "DistilBertConfig", "albert": "AlbertConfig",
                      "mobilebert": "MobileBertConfig", "convbert": "ConvBertConfig", "funnel": "FunnelConfig",
                      "modernbert": "ModernBertConfig", "roformer": "RoFormerConfig",
                      "nystromformer": "NystromformerConfig", "squeezebert": "SqueezeBertConfig",
                      "longformer": "LongformerConfig"}

# models trained with an explicit padding mask, where compiling without one
# fails (transformers 5.x). Nystromformer: given none, a (B, 1, S, S) mask
# is built while compiling (tracing cannot see that no token is padded),
# which does not broadcast onto the (B, heads, landmarks, S) scores of its
# landmark path; the additive (B, 1, 1, S) mask it was written for does.
# LongT5: its encoder makes a mask of ones only when not compiling, and the
# transient-global attention without one mixes a batch of 1 with B.
_PADDING_MASK = {"nystromformer": "additive", "longt5": "2d"}

# image classifiers trained like ViT: BEiT (relative position bias tables,
# layer scale, mean pooling), Swin V2 (cosine attention, a continuous
# position bias from a small MLP, post-norm residuals), Perceiver (a latent
# array cross-attending to every pixel, learned positions concatenated to
# the pixels, a decoder query cross-attending to the latents), CvT
# (convolutional token embeddings; queries, keys and values projected by
# depthwise convolutions with batch norm, keys and values strided)
_IMAGE_CLS_CONFIGS = {"beit": "BeitConfig", "swinv2": "Swinv2Config", "perceiver": "PerceiverConfig",
                      "cvt": "CvtConfig"}

# audio classifiers trained like wav2vec 2.0 (raw audio, pooled logits):
# the wav2vec 2.0 Conformer (Transformer-XL relative positions with a
# relative shift, a convolution module of pointwise convolution, GLU,
# depthwise convolution and batch norm, half-step feed-forward networks),
# WavLM (gated relative position bias: bucketed relative positions scaled
# by gates computed from each query), SEW-D (frames squeezed by strided
# pooling and upsampled back, DeBERTa's disentangled attention over
# log-bucketed relative positions)
_AUDIO_CLS_CONFIGS = {"wav2vec2_conformer": "Wav2Vec2ConformerConfig", "wavlm": "WavLMConfig",
                      "sew_d": "SEWDConfig"}

# encoder-decoders trained like T5 (token labels through the decoder)
_SEQ2SEQ_CONFIGS = {"switch_transformers": ("SwitchTransformersConfig", "SwitchTransformersForConditionalGeneration"),
                    "longt5": ("LongT5Config", "LongT5ForConditionalGeneration")}

# forecasters of multichannel time series, trained on the horizon's MSE:
# PatchTST (channel-independent patches of the series, standard scaling
# over the context window, a Transformer encoder with BatchNorm), and
# PatchTSMixer (MLP-Mixer over patches and over features, gated attention)
_FORECAST_CONFIGS = {"patchtst": ("PatchTSTConfig", "PatchTSTForPrediction"),
                     "patchtsmixer": ("PatchTSMixerConfig", "PatchTSMixerForPrediction")}


def _hf_loss_module():
    import torch

    class HFLoss(torch.nn.Module):
        """A transformers model whose forward returns its training loss."""

        def __init__(self, model, kind):
            super().__init__()
            self.model, self.kind = model, kind

        def forward(self, a, b=None, c=None):
            if self.kind == "causal":
                return self.model(input_ids=a, labels=a).loss
            if self.kind in _PADDING_MASK:
                mask = c
                if _PADDING_MASK[self.kind] == "additive":  # 0 where kept, the dtype's minimum where padded
                    dt = self.model.dtype
                    mask = (1.0 - c[:, None, None, :].to(dt)) * torch.finfo(dt).min
                return self.model(input_ids=a, attention_mask=mask, labels=b).loss
            if self.kind in ("vit", "dinov2", "segformer") or self.kind in _IMAGE_CLS_CONFIGS:
                return self.model(pixel_values=a, labels=b).loss
            if self.kind == "whisper":
                return self.model(input_features=a, labels=b).loss
            if self.kind in ("clip", "siglip"):
                return self.model(input_ids=a, pixel_values=b, return_loss=True).loss
            if self.kind == "wav2vec2" or self.kind in _AUDIO_CLS_CONFIGS:
                return self.model(input_values=a, labels=b).loss
            if self.kind in _FORECAST_CONFIGS:
                return self.model(past_values=a, future_values=b).loss
            if self.kind == "t5":
                return self.model(input_ids=a, labels=b).loss
            return self.model(input_ids=a, labels=b).loss

    return HFLoss


def _HFLoss(model, kind):
    return _hf_loss_module()(model, kind)


# ---------------------------------------------------------------- vision
def _vision(lib: str, name: str, channels_last: bool = False, **kw: Any):
    def build(shapes: list, dtype: str, device: str, mode: str) -> Callable[[], Any]:
        import torch
        import torch.nn.functional as F

        if lib == "timm":
            import timm

            model = timm.create_model(name, pretrained=False, num_classes=100, **kw)
        else:
            import torchvision

            model = getattr(torchvision.models, name)(weights=None, num_classes=100, **kw)
        model = model.to(device=device, dtype=_torch_dtype(dtype))
        if channels_last:
            model = model.to(memory_format=torch.channels_last)

        def make_inputs(shape):
            b, hw = shape["B"], shape["HW"]
            x = torch.randn(b, 3, hw, hw, device=device, dtype=_torch_dtype(dtype))
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            return (x, torch.randint(0, 100, (b,), device=device))

        class Classify(torch.nn.Module):
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x, y):
                return F.cross_entropy(self.net(x).float(), y)

        return _training_step(Classify(model), make_inputs, lambda out, *a: out, mode, shapes)

    return build


def _vision_task(task: str, name: str, num_classes: int, **kw: Any):
    """torchvision's video classifiers (``task="video"``: B clips of 3 x T x
    HW x HW, cross-entropy on the clip), segmentation models
    (``task="segmentation"``: B images of HW x HW, cross-entropy per pixel
    on the ``out`` map) and optical-flow models (``task="flow"``: B pairs
    of HW x HW frames, RAFT's sequence loss: the L1 error of every refined
    flow field against the target, later refinements weighted more;
    ``num_classes`` is unused, ``updates`` sets the refinement count);
    random weights, backbones included."""

    def build(shapes: list, dtype: str, device: str, mode: str) -> Callable[[], Any]:
        import torch
        import torch.nn.functional as F
        import torchvision

        args = dict(kw)
        updates = args.pop("updates", 12)
        if task == "video":
            model = getattr(torchvision.models.video, name)(weights=None, num_classes=num_classes, **args)
        elif task == "segmentation":
            model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                                   num_classes=num_classes, **args)
        elif task == "flow":
            model = getattr(torchvision.models.optical_flow, name)(weights=None, **args)
        else:
            raise ValueError(task)
        model = model.to(device=device, dtype=_torch_dtype(dtype))

        def make_inputs(shape):
            b, hw = shape["B"], shape["HW"]
            dt = _torch_dtype(dtype)
            if task == "video":
                x = torch.randn(b, 3, shape["T"], hw, hw, device=device, dtype=dt)
                return (x, torch.randint(0, num_classes, (b,), device=device))
            if task == "flow":  # the two frames stacked on dim 1, the target flow
                return (torch.randn(b, 2, 3, hw, hw, device=device, dtype=dt),
                        torch.randn(b, 2, hw, hw, device=device, dtype=dt))
            x = torch.randn(b, 3, hw, hw, device=device, dtype=dt)
            return (x, torch.randint(0, num_classes, (b, hw, hw), device=device))

        class Loss(torch.nn.Module):
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x, y):
                if task == "flow":
                    flows = self.net(x[:, 0], x[:, 1], num_flow_updates=updates)
                    n = len(flows)
                    return sum(0.8 ** (n - 1 - i) * (f.float() - y.float()).abs().mean() for i, f in enumerate(flows))
                out = self.net(x)
                out = out["out"] if task == "segmentation" else out
                return F.cross_entropy(out.float(), y)

        return _training_step(Loss(model), make_inputs, lambda out, *a: out, mode, shapes)

    return build


# ---------------------------------------------------------------- plain torch
def _plain(kind: str):
    """Small programs written with torch operators: losses, normalizations,
    attention variants, scatter/gather, scans, pointwise chains, MLPs, a
    U-Net block, vector quantization, a chunked state-space scan, graph
    attention over an edge list, a DLRM recommender, a NeRF field with
    volume rendering, a PointNet classifier."""

    def build(shapes: list, dtype: str, device: str, mode: str) -> Callable[[], Any]:
        module, make_inputs = _PLAIN_BUILDERS[kind](shapes[0], _torch_dtype(dtype), device)
        return _training_step(module.to(device), make_inputs, lambda out, *a: out, mode, shapes)

    return build


def _plain_builders() -> dict[str, Callable]:
    """{kind: (shape, torch dtype, device) -> (module, make_inputs)}; each
    module's forward returns a scalar loss; ``make_inputs(shape)`` reads the
    dimensions that may change between runs (batch, tokens, rows), the module
    those it was built with."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def param(*size, dt, device, scale=1.0):
        return nn.Parameter(torch.randn(*size, dtype=dt, device=device) * scale)

    def losses(shape, dt, device):
        v = shape["V"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = param(v, dt=dt, device=device, scale=0.1)

            def forward(self, logits, target, dense):
                z = logits * self.w
                ce = F.cross_entropy(z.float(), target, label_smoothing=0.1)
                kl = F.kl_div(F.log_softmax(z, -1), F.softmax(dense, -1), reduction="batchmean")
                bce = F.binary_cross_entropy_with_logits(z, torch.sigmoid(dense))
                return ce + kl + bce + F.smooth_l1_loss(z, dense) + F.mse_loss(z, dense)

        def inputs(s):
            n = s["N"]
            return (torch.randn(n, v, device=device, dtype=dt, requires_grad=True),
                    torch.randint(0, v, (n,), device=device), torch.randn(n, v, device=device, dtype=dt))

        return M(), inputs

    def norms(shape, dt, device):
        c = shape["C"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = nn.LayerNorm(c, device=device, dtype=dt)
                self.gn = nn.GroupNorm(8, c, device=device, dtype=dt)
                self.bn = nn.BatchNorm2d(c, device=device, dtype=dt)
                self.rms_w = param(c, dt=dt, device=device)

            def forward(self, x):
                y = self.bn(self.gn(x))
                t = y.permute(0, 2, 3, 1)
                t = self.ln(t)
                t = t * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(dt) * self.rms_w
                return t.float().square().mean()

        return M(), lambda s: (torch.randn(s["B"], c, s["HW"], s["HW"], device=device, dtype=dt, requires_grad=True),)

    def attention(shape, dt, device):
        h, d = shape["H"], shape["D"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / h) for i in range(h)], device=device, dtype=dt)

            def forward(self, q, k, v):
                scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
                pos = torch.arange(q.shape[-2], device=q.device)
                rel = (pos[None, :] - pos[:, None]).to(dt)
                scores = scores + self.slopes[:, None, None] * rel  # ALiBi bias
                causal = pos[None, :] > pos[:, None]
                scores = scores.masked_fill(causal, float("-inf"))
                p = torch.softmax(scores.float(), -1).to(dt)
                p = F.dropout(p, 0.1, training=True)
                return (p @ v).float().pow(2).mean()

        def inputs(s):
            return tuple(torch.randn(s["B"], h, s["S"], d, device=device, dtype=dt, requires_grad=True) for _ in range(3))

        return M(), inputs

    def flex_attention(shape, dt, device):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention as flex

        b, h, s, d = shape["B"], shape["H"], shape["S"], shape["D"]

        def causal(b_, h_, q_idx, kv_idx):
            return q_idx >= kv_idx

        mask = create_block_mask(causal, None, None, s, s, device=device)

        class M(nn.Module):
            def forward(self, q, k, v):
                return flex(q, k, v, block_mask=mask).float().pow(2).mean()

        def inputs(_shape):  # one size: the block mask is built for it
            return tuple(torch.randn(b, h, s, d, device=device, dtype=dt, requires_grad=True) for _ in range(3))

        return M(), inputs

    def gather_scatter(shape, dt, device):
        d, v = shape["D"], shape["V"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = param(v, d, dt=dt, device=device, scale=0.02)

            def forward(self, idx, offsets, x):
                bag = F.embedding_bag(idx, self.table, offsets, mode="mean")
                g = torch.gather(x, 1, (idx[: x.shape[0] * 4].view(x.shape[0], 4) % x.shape[1]))
                acc = torch.zeros(v, d, device=x.device, dtype=x.dtype).index_add(0, idx[: x.shape[0]] % v, x)
                mx = torch.zeros(v, device=x.device, dtype=x.dtype).scatter_reduce(
                    0, idx[: x.shape[0]] % v, x.sum(1), reduce="amax", include_self=False)
                return bag.float().pow(2).mean() + g.float().mean() + acc.float().pow(2).mean() + mx.float().mean()

        def inputs(s):
            n = s["N"]
            idx = torch.randint(0, v, (n * 4,), device=device)
            offsets = torch.arange(0, n * 4, 4, device=device)
            return idx, offsets, torch.randn(n, d, device=device, dtype=dt, requires_grad=True)

        return M(), inputs

    def scans(shape, dt, device):
        n = shape["N"]

        class M(nn.Module):
            def forward(self, x):
                c = torch.cumsum(x.float(), -1)
                p = torch.cumprod(torch.sigmoid(x).float() + 0.5, -1)
                l = torch.logcumsumexp(x.float(), -1)
                s, _ = torch.sort(x, -1)
                t, _ = torch.topk(x, 8, -1)
                return c.mean() + p.log().mean() + l.mean() + s.float().pow(2).mean() + t.float().mean()

        return M(), lambda s: (torch.randn(s["M"], n, device=device, dtype=dt, requires_grad=True),)

    def mlp(shape, dt, device):
        k, n = shape["K"], shape["N"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.Linear(k, n, device=device, dtype=dt)
                self.gate = nn.Linear(k, n, bias=False, device=device, dtype=dt)
                self.down = nn.Linear(n, k, device=device, dtype=dt)

            def forward(self, x):
                h = F.silu(self.gate(x)) * F.gelu(self.up(x), approximate="tanh")
                return self.down(h).float().pow(2).mean()

        return M(), lambda s: (torch.randn(s["M"], k, device=device, dtype=dt, requires_grad=True),)

    def pointwise(shape, dt, device):
        seq, d = shape["S"], shape["D"]  # the scale parameter fixes the sequence length

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.bias = param(d, dt=dt, device=device, scale=0.1)
                self.scale = param(seq, 1, dt=dt, device=device)

            def forward(self, x, y):
                a = F.silu(x + self.bias) * y
                g = F.gelu(a * self.scale, approximate="none")
                h = torch.where(g > 0, torch.exp(-g.abs()), torch.tanh(g)) + torch.rsqrt(y.abs() + 1.0)
                r = h.transpose(1, 2).contiguous() + 1.0  # a real transpose copy
                v, m = torch.var_mean(h.float(), dim=-1)
                return r.float().mean() + v.mean() + m.abs().mean() + torch.softmax(h.float(), 1).amax(1).mean()

        def inputs(s):
            return (torch.randn(s["B"], seq, d, device=device, dtype=dt, requires_grad=True),
                    torch.randn(s["B"], seq, d, device=device, dtype=dt, requires_grad=True))

        return M(), inputs

    def conv(shape, dt, device):
        c = shape["C"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(c, c, 3, padding=1, device=device, dtype=dt)
                self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c, device=device, dtype=dt)
                self.c2 = nn.Conv2d(c, 2 * c, 1, device=device, dtype=dt)

            def forward(self, x):
                return F.gelu(self.c2(self.dw(F.relu(self.c1(x))))).float().pow(2).mean()

        return M(), lambda s: (torch.randn(s["B"], c, s["HW"], s["HW"], device=device, dtype=dt, requires_grad=True),)

    def unet_block(shape, dt, device):
        # a diffusion U-Net's residual block and spatial self-attention:
        # GroupNorm(32) + SiLU before each convolution, the timestep
        # embedding added per channel, one attention head per 64 channels
        c, temb = shape["C"], 4 * shape["C"]
        heads = max(1, c // 64)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                kw = dict(device=device, dtype=dt)
                self.gn1, self.gn2, self.gn3 = (nn.GroupNorm(32, c, **kw) for _ in range(3))
                self.conv1 = nn.Conv2d(c, c, 3, padding=1, **kw)
                self.conv2 = nn.Conv2d(c, c, 3, padding=1, **kw)
                self.temb = nn.Linear(temb, c, **kw)
                self.qkv = nn.Conv2d(c, 3 * c, 1, **kw)
                self.proj = nn.Conv2d(c, c, 1, **kw)

            def forward(self, x, t):
                h = self.conv1(F.silu(self.gn1(x)))
                h = h + self.temb(F.silu(t))[:, :, None, None]
                h = self.conv2(F.dropout(F.silu(self.gn2(h)), 0.1, self.training))
                x = x + h
                b, _, hh, ww = x.shape
                q, k, v = self.qkv(self.gn3(x)).reshape(b, 3, heads, c // heads, hh * ww).transpose(-1, -2).unbind(1)
                a = F.scaled_dot_product_attention(q, k, v)
                x = x + self.proj(a.transpose(-1, -2).reshape(b, c, hh, ww))
                return x.float().pow(2).mean()

        def inputs(s):
            return (torch.randn(s["B"], c, s["HW"], s["HW"], device=device, dtype=dt, requires_grad=True),
                    torch.randn(s["B"], temb, device=device, dtype=dt))

        return M(), inputs

    def vq_codebook(shape, dt, device):
        # a VQ-VAE bottleneck: squared distances to a codebook, argmin,
        # the chosen codes gathered back, straight-through gradients,
        # codebook and commitment losses, and the perplexity of code usage
        d, k = shape["D"], shape["K"]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(d, d, device=device, dtype=dt)
                self.codebook = param(k, d, dt=dt, device=device)

            def forward(self, x):
                z = self.proj(x).flatten(0, -2)
                zf, cb = z.float(), self.codebook.float()
                dist = zf.pow(2).sum(-1, keepdim=True) - 2 * zf @ cb.t() + cb.pow(2).sum(-1)
                idx = dist.argmin(-1)
                q = F.embedding(idx, self.codebook)
                loss = F.mse_loss(q.float(), zf.detach()) + 0.25 * F.mse_loss(zf, q.detach().float())
                st = z + (q - z).detach()  # straight-through estimator
                usage = torch.zeros(k, device=z.device).index_add(0, idx, torch.ones_like(idx, dtype=torch.float32))
                usage = usage / idx.numel()
                perplexity = torch.exp(-(usage * torch.log(usage + 1e-10)).sum())
                return loss + st.float().pow(2).mean() + 1e-3 * perplexity

        return M(), lambda s: (torch.randn(s["B"], s["T"], d, device=device, dtype=dt, requires_grad=True),)

    def ssd_scan(shape, dt, device):
        # a Mamba-2 mixer: causal depthwise conv1d, softplus step sizes, the
        # chunked state-space scan (segment sums by cumsum, exp of masked
        # differences, intra-chunk products, states passed between chunks),
        # a SiLU gate and RMSNorm; 64-wide heads and states, chunks of 64
        d = shape["D"]
        h, p, n, q = d // 64, 64, 64, 64

        def segsum(a):  # (..., T) -> (..., T, T): sum of a over (j, i], -inf above the diagonal
            t = a.shape[-1]
            a = a[..., None].expand(*a.shape, t)
            below = torch.tril(torch.ones(t, t, dtype=torch.bool, device=a.device), -1)
            cs = torch.cumsum(a.masked_fill(~below, 0), -2)
            return cs.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool, device=a.device)), float("-inf"))

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                kw = dict(device=device, dtype=dt)
                self.in_proj = nn.Linear(d, 2 * d + 2 * n + h, bias=False, **kw)
                self.conv = nn.Conv1d(d + 2 * n, d + 2 * n, 4, padding=3, groups=d + 2 * n, **kw)
                self.a_log = nn.Parameter(torch.log(torch.linspace(1, 16, h, device=device)))
                self.dt_bias = nn.Parameter(torch.zeros(h, device=device))
                self.norm_w = param(d, dt=dt, device=device)
                self.out_proj = nn.Linear(d, d, bias=False, **kw)

            def forward(self, u):
                b, s, _ = u.shape
                c = s // q
                z, xbc, dt_ = self.in_proj(u).split([d, d + 2 * n, h], -1)
                xbc = F.silu(self.conv(xbc.transpose(1, 2))[..., :s].transpose(1, 2))
                x, bm, cm = xbc.split([d, n, n], -1)
                step = F.softplus(dt_.float() + self.dt_bias)  # (b, s, h)
                a = (-torch.exp(self.a_log) * step).view(b, c, q, h).permute(0, 3, 1, 2)  # (b, h, c, q)
                x = (x.float() * step.repeat_interleave(p, -1)).to(dt).view(b, c, q, h, p)
                bm, cm = bm.view(b, c, q, n), cm.view(b, c, q, n)
                a_cs = torch.cumsum(a, -1)
                decay = torch.exp(segsum(a)).to(dt)  # (b, h, c, q, q)
                scores = (cm @ bm.transpose(-1, -2))[:, None] * decay  # (b, h, c, q, q)
                y_diag = scores @ x.permute(0, 3, 1, 2, 4)  # (b, h, c, q, p)
                w = torch.exp(a_cs[..., -1:] - a_cs).to(dt)  # (b, h, c, q)
                states = (x.permute(0, 3, 1, 4, 2) * w[:, :, :, None, :]) @ bm[:, None]  # (b, h, c, p, n)
                states = torch.cat([torch.zeros_like(states[:, :, :1]), states], 2)
                chunk_decay = torch.exp(segsum(F.pad(a_cs[..., -1], (1, 0)))).to(dt)  # (b, h, c+1, c+1)
                states = (chunk_decay @ states.flatten(3)).view_as(states)[:, :, :-1]
                y_off = (cm[:, None] @ states.transpose(-1, -2)) * torch.exp(a_cs).to(dt)[..., None]
                y = (y_diag + y_off).permute(0, 2, 3, 1, 4).reshape(b, s, d)
                y = y * F.silu(z)
                yf = y.float()
                y = (yf * torch.rsqrt(yf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(dt) * self.norm_w
                return self.out_proj(y).float().pow(2).mean()

        return M(), lambda s: (torch.randn(s["B"], s["S"], d, device=device, dtype=dt, requires_grad=True),)

    def graph_attention(shape, dt, device):
        # two graph layers over an edge list of E (source, target) pairs on
        # N nodes: a GCN layer (degrees counted by index_add, messages scaled
        # by rsqrt of both degrees, summed into targets) and a GAT layer
        # (per-head LeakyReLU edge scores from gathered node terms, a softmax
        # over each target's incoming edges: segment max by scatter_reduce,
        # exp, segment sum by index_add), ELU, a node-classification loss
        d, heads, classes = shape["D"], 8, 40

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                kw = dict(device=device, dtype=dt)
                self.gcn = nn.Linear(d, d, **kw)
                self.gat = nn.Linear(d, d, bias=False, **kw)
                self.att_src = param(heads, d // heads, dt=dt, device=device, scale=0.1)
                self.att_dst = param(heads, d // heads, dt=dt, device=device, scale=0.1)
                self.out = nn.Linear(d, classes, **kw)

            def forward(self, x, src, dst, labels):
                n = x.shape[0]
                deg = torch.ones(n, device=x.device, dtype=x.dtype).index_add(0, dst, torch.ones_like(src, dtype=x.dtype))
                norm = torch.rsqrt(deg[src] * deg[dst])[:, None]
                h = self.gcn(x)
                h = F.relu(h / deg[:, None] + torch.zeros_like(h).index_add(0, dst, h[src] * norm))
                g = self.gat(h).view(n, heads, d // heads)
                a_src, a_dst = (g * self.att_src).sum(-1), (g * self.att_dst).sum(-1)  # (n, heads)
                e = F.leaky_relu(a_src[src] + a_dst[dst], 0.2).float()  # (edges, heads)
                e_max = torch.full((n, heads), float("-inf"), device=x.device).scatter_reduce(
                    0, dst[:, None].expand_as(e), e.detach(), reduce="amax", include_self=True)
                w = torch.exp(e - e_max[dst])
                denom = torch.zeros(n, heads, device=x.device).index_add(0, dst, w)
                alpha = (w / (denom[dst] + 1e-16)).to(dt)
                msg = torch.zeros_like(g).index_add(0, dst, g[src] * alpha[..., None])
                h = F.elu(msg.reshape(n, d)) + h
                return F.cross_entropy(self.out(h).float(), labels)

        def inputs(s):
            n, edges = s["N"], s["E"]
            src = torch.randint(0, n, (edges,), device=device)
            dst = torch.randint(0, n, (edges,), device=device)
            return (torch.randn(n, d, device=device, dtype=dt, requires_grad=True), src, dst,
                    torch.randint(0, classes, (n,), device=device))

        return M(), inputs

    def dlrm(shape, dt, device):
        # a DLRM click model: a bottom MLP over 13 dense features, 8 sum
        # embedding bags of V rows with per-sample weights and bags of
        # varying length, the pairwise dot interaction of the 9 vectors (a
        # batched Gram matrix, its strict upper triangle gathered), a top
        # MLP and a binary cross-entropy on the click logit
        v, d, tables, dense = shape["V"], 64, 8, 13
        pairs = torch.triu_indices(tables + 1, tables + 1, 1, device=device)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                kw = dict(device=device, dtype=dt)
                self.bottom = nn.Sequential(nn.Linear(dense, 512, **kw), nn.ReLU(), nn.Linear(512, 256, **kw), nn.ReLU(),
                                            nn.Linear(256, d, **kw), nn.ReLU())
                self.tables = nn.ModuleList(nn.EmbeddingBag(v, d, mode="sum", **kw) for _ in range(tables))
                n_int = pairs.shape[1] + d
                self.top = nn.Sequential(nn.Linear(n_int, 512, **kw), nn.ReLU(), nn.Linear(512, 256, **kw), nn.ReLU(),
                                         nn.Linear(256, 1, **kw))

            def forward(self, x, idx, offsets, weights, click):
                z = self.bottom(x)
                embs = [t(idx[i], offsets[i], per_sample_weights=weights[i]) for i, t in enumerate(self.tables)]
                t = torch.stack([z, *embs], 1)  # (b, tables + 1, d)
                gram = torch.bmm(t, t.transpose(1, 2))
                inter = gram[:, pairs[0], pairs[1]]
                logit = self.top(torch.cat([z, inter], 1)).squeeze(1)
                return F.binary_cross_entropy_with_logits(logit.float(), click)

        def inputs(s):
            b = s["B"]
            lengths = torch.randint(1, 8, (tables, b), device=device)
            total = int(lengths.sum(1).max())
            offsets = torch.cat([torch.zeros(tables, 1, dtype=torch.long, device=device), lengths.cumsum(1)[:, :-1]], 1)
            idx = torch.randint(0, v, (tables, total), device=device)
            weights = torch.rand(tables, total, device=device, dtype=dt)
            return (torch.randn(b, dense, device=device, dtype=dt), idx, offsets, weights,
                    torch.randint(0, 2, (b,), device=device).float())

        return M(), inputs

    def nerf(shape, dt, device):
        # a NeRF field and its volume rendering: S jittered samples along
        # each of N rays, sin/cos positional encodings of 10 (points) and 4
        # (directions) octaves, an MLP with a skip concatenation, ReLU
        # density and sigmoid colour, alpha compositing with an exclusive
        # cumulative product of transmittance, colour, depth and opacity
        # sums over the samples, a photometric loss
        samples, width, lp, ld = shape["S"], 256, 10, 4
        freqs_p = (2.0 ** torch.arange(lp, device=device)) * math.pi
        freqs_d = (2.0 ** torch.arange(ld, device=device)) * math.pi

        def encode(x, freqs):  # (..., 3) -> (..., 3 + 6 * len(freqs))
            xf = (x[..., None] * freqs).flatten(-2)
            return torch.cat([x, torch.sin(xf), torch.cos(xf)], -1)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                kw = dict(device=device, dtype=dt)
                cp, cd = 3 + 6 * lp, 3 + 6 * ld
                self.l1, self.l2 = nn.Linear(cp, width, **kw), nn.Linear(width, width, **kw)
                self.l3, self.l4 = nn.Linear(width + cp, width, **kw), nn.Linear(width, width, **kw)
                self.sigma = nn.Linear(width, 1, **kw)
                self.feat = nn.Linear(width, width, **kw)
                self.rgb1, self.rgb2 = nn.Linear(width + cd, width // 2, **kw), nn.Linear(width // 2, 3, **kw)

            def forward(self, origins, dirs, target):
                n = origins.shape[0]
                t = torch.linspace(2.0, 6.0, samples, device=origins.device)
                t = t + torch.rand(n, samples, device=origins.device) * (4.0 / samples)  # stratified jitter
                pts = origins[:, None] + dirs[:, None] * t[..., None]  # (n, s, 3)
                ep = encode(pts, freqs_p).to(dt)
                h = F.relu(self.l2(F.relu(self.l1(ep))))
                h = F.relu(self.l4(F.relu(self.l3(torch.cat([h, ep], -1)))))
                sigma = F.relu(self.sigma(h)).squeeze(-1).float()
                vd = F.normalize(dirs, dim=-1)
                ed = encode(vd, freqs_d).to(dt)[:, None].expand(n, samples, -1)
                rgb = torch.sigmoid(self.rgb2(F.relu(self.rgb1(torch.cat([self.feat(h), ed], -1))))).float()
                delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], -1) * dirs.norm(dim=-1,
                                                                                                        keepdim=True)
                alpha = 1.0 - torch.exp(-sigma * delta)
                trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
                w = alpha * trans
                color = (w[..., None] * rgb).sum(1)
                depth, acc = (w * t).sum(1), w.sum(1)
                return F.mse_loss(color + (1.0 - acc[:, None]), target) + 1e-3 * depth.mean()

        def inputs(s):
            n = s["N"]
            return (torch.randn(n, 3, device=device), torch.randn(n, 3, device=device), torch.rand(n, 3, device=device))

        return M(), inputs

    def pointnet(shape, dt, device):
        # a PointNet classifier over B clouds of N points: shared per-point
        # MLPs as 1x1 Conv1d + BatchNorm1d + ReLU, a learned 64 x 64 feature
        # transform (its own point MLP, max over points, an MLP to the
        # matrix, a batched matmul) with an orthogonality penalty, max
        # pooling of 1024 channels over the points, an MLP head with dropout
        classes = 40

        def point_mlp(widths, kw):
            layers = []
            for a, b in zip(widths[:-1], widths[1:]):
                layers += [nn.Conv1d(a, b, 1, **kw), nn.BatchNorm1d(b, **kw), nn.ReLU()]
            return nn.Sequential(*layers)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                kw = dict(device=device, dtype=dt)
                self.mlp1 = point_mlp((3, 64, 64), kw)
                self.t_mlp = point_mlp((64, 64, 128, 512), kw)
                self.t_fc = nn.Sequential(nn.Linear(512, 256, **kw), nn.BatchNorm1d(256, **kw), nn.ReLU(),
                                          nn.Linear(256, 64 * 64, **kw))
                self.mlp2 = point_mlp((64, 128, 1024), kw)
                self.head = nn.Sequential(nn.Linear(1024, 512, **kw), nn.BatchNorm1d(512, **kw), nn.ReLU(),
                                          nn.Dropout(0.3), nn.Linear(512, 256, **kw), nn.BatchNorm1d(256, **kw),
                                          nn.ReLU(), nn.Linear(256, classes, **kw))
                nn.init.zeros_(self.t_fc[-1].weight)  # the transform starts as the identity
                nn.init.zeros_(self.t_fc[-1].bias)
                self.register_buffer("eye", torch.eye(64, device=device, dtype=dt))

            def forward(self, pts, labels):
                b = pts.shape[0]
                f = self.mlp1(pts.transpose(1, 2))  # (b, 64, n)
                trans = self.t_fc(self.t_mlp(f).amax(-1)).view(b, 64, 64) + self.eye
                f = torch.bmm(trans.transpose(1, 2), f)
                g = self.mlp2(f).amax(-1)  # (b, 1024)
                reg = (torch.bmm(trans, trans.transpose(1, 2)) - self.eye).float().pow(2).sum((1, 2)).mean()
                return F.cross_entropy(self.head(g).float(), labels) + 1e-3 * reg

        def inputs(s):
            return (torch.randn(s["B"], s["N"], 3, device=device, dtype=dt),
                    torch.randint(0, classes, (s["B"],), device=device))

        return M(), inputs

    return {
        "losses": losses, "norms": norms, "attention": attention, "flex_attention": flex_attention,
        "gather_scatter": gather_scatter, "scans": scans, "mlp": mlp, "pointwise": pointwise, "conv": conv,
        "unet_block": unet_block, "vq_codebook": vq_codebook, "ssd_scan": ssd_scan,
        "graph_attention": graph_attention, "dlrm": dlrm, "nerf": nerf, "pointnet": pointnet,
    }


class _LazyBuilders(dict):
    def __missing__(self, key):
        self.update(_plain_builders())
        return dict.__getitem__(self, key)


_PLAIN_BUILDERS: dict[str, Callable] = _LazyBuilders()


def _adamw(shapes: list, dtype: str, device: str, mode: str) -> Callable[[], Any]:
    """One AdamW update of a few parameter tensors, compiled (Inductor
    fuses the per-parameter updates into foreach kernels)."""
    import torch

    dt = _torch_dtype(dtype)
    n, d = shapes[0]["N"], shapes[0]["D"]
    params = [torch.nn.Parameter(torch.randn(*s, device=device, dtype=dt)) for s in ((n, d), (d, d), (d,), (n,), (4 * d, d))]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, foreach=True)
    opt.step()  # state exists before compiling, as in a real training loop
    compiled = _compile(opt.step, mode)

    def step():
        return compiled()

    return step


# ---------------------------------------------------------------- the entries
_SMALL_LM = dict(vocab_size=8192, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                 num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048)


def _entries() -> list[ZooEntry]:
    E = ZooEntry
    tf = ("transformers",)
    out: list[ZooEntry] = []
    llama = _hf_causal_lm("LlamaConfig", **_SMALL_LM)
    llama_eager = _hf_causal_lm("LlamaConfig", attn="eager", **_SMALL_LM)
    for shape, dtype in (({"B": 4, "S": 256}, "bf16"), ({"B": 2, "S": 1024}, "bf16"), ({"B": 8, "S": 128}, "fp16"),
                         ({"B": 2, "S": 512}, "fp32")):
        out.append(E("llama", shape, dtype, llama, needs=tf))
    out.append(E("llama_eager_attn", {"B": 4, "S": 256}, "bf16", llama_eager, needs=tf))
    out.append(E("mistral", {"B": 4, "S": 512}, "bf16",
                 _hf_causal_lm("MistralConfig", sliding_window=256, **_SMALL_LM), needs=tf))
    qwen = _hf_causal_lm("Qwen2Config", **{**_SMALL_LM, "hidden_size": 448, "num_attention_heads": 7, "num_key_value_heads": 1})
    out.append(E("qwen2", {"B": 4, "S": 384}, "bf16", qwen, needs=tf))
    out.append(E("qwen2", {"B": 2, "S": 1000}, "fp16", qwen, needs=tf))
    mixtral = _hf_causal_lm("MixtralConfig", num_local_experts=4, num_experts_per_tok=2,
                            **{**_SMALL_LM, "intermediate_size": 704})
    out.append(E("mixtral_moe", {"B": 4, "S": 256}, "bf16", mixtral, needs=tf))
    gpt2 = _hf_causal_lm("GPT2Config", attn="eager", vocab_size=8192, n_embd=512, n_layer=2, n_head=8, n_positions=1024,
                         bos_token_id=0, eos_token_id=0)
    out.append(E("gpt2", {"B": 4, "S": 512}, "fp32", gpt2, needs=tf))
    out.append(E("gpt2", {"B": 8, "S": 256}, "fp16", gpt2, needs=tf))
    bert = _hf_model("bert", vocab_size=8192, hidden_size=512, num_hidden_layers=2, num_attention_heads=8,
                     intermediate_size=2048, max_position_embeddings=512)
    out.append(E("bert", {"B": 8, "S": 256}, "fp32", bert, needs=tf))
    out.append(E("bert", {"B": 16, "S": 128}, "bf16", bert, needs=tf))
    vit = _hf_model("vit", image_size=96, patch_size=8, hidden_size=384, num_hidden_layers=2, num_attention_heads=6,
                    intermediate_size=1536, num_labels=100)
    out.append(E("vit", {"B": 32}, "fp32", vit, needs=tf))
    out.append(E("vit", {"B": 64}, "bf16", vit, needs=tf))
    t5 = _hf_model("t5", vocab_size=8192, d_model=512, d_ff=1024, d_kv=64, num_layers=2, num_decoder_layers=2,
                   num_heads=8, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    out.append(E("t5", {"B": 8, "S": 128}, "fp32", t5, needs=tf))
    out.append(E("t5", {"B": 8, "S": 256}, "bf16", t5, needs=tf))
    tv, tm = ("torchvision",), ("timm",)
    out.append(E("resnet18", {"B": 32, "HW": 64}, "fp32", _vision("torchvision", "resnet18"), needs=tv))
    out.append(E("resnet18_cl", {"B": 32, "HW": 96}, "bf16", _vision("torchvision", "resnet18", channels_last=True), needs=tv))
    out.append(E("mobilenet_v3", {"B": 32, "HW": 96}, "fp32", _vision("torchvision", "mobilenet_v3_small"), needs=tv))
    out.append(E("efficientnet_b0", {"B": 16, "HW": 96}, "bf16", _vision("timm", "efficientnet_b0"), needs=tm))
    out.append(E("convnext_atto", {"B": 32, "HW": 64}, "fp32", _vision("timm", "convnext_atto"), needs=tm))
    out.append(E("convnext_atto", {"B": 16, "HW": 128}, "bf16", _vision("timm", "convnext_atto"), needs=tm))
    for shape, dtype in (({"N": 4096, "V": 8192}, "fp32"), ({"N": 2048, "V": 32000}, "bf16"), ({"N": 1000, "V": 5003}, "fp16")):
        out.append(E("losses", shape, dtype, _plain("losses")))
    for shape, dtype in (({"B": 16, "C": 64, "HW": 56}, "fp32"), ({"B": 8, "C": 256, "HW": 28}, "bf16"),
                         ({"B": 32, "C": 96, "HW": 17}, "fp16")):
        out.append(E("norms", shape, dtype, _plain("norms")))
    for shape, dtype in (({"B": 4, "H": 8, "S": 512, "D": 64}, "bf16"), ({"B": 2, "H": 12, "S": 1024, "D": 64}, "fp16"),
                         ({"B": 8, "H": 4, "S": 256, "D": 32}, "fp32")):
        out.append(E("attention", shape, dtype, _plain("attention")))
    for shape, dtype in (({"B": 4, "H": 8, "S": 1024, "D": 64}, "bf16"), ({"B": 2, "H": 16, "S": 2048, "D": 128}, "fp16")):
        out.append(E("flex_attention", shape, dtype, _plain("flex_attention")))
    for shape, dtype in (({"N": 8192, "D": 256, "V": 50000}, "fp32"), ({"N": 4096, "D": 768, "V": 30000}, "bf16")):
        out.append(E("gather_scatter", shape, dtype, _plain("gather_scatter")))
    for shape, dtype in (({"M": 1024, "N": 4096}, "fp32"), ({"M": 4096, "N": 1000}, "bf16"), ({"M": 64, "N": 16384}, "fp16")):
        out.append(E("scans", shape, dtype, _plain("scans")))
    for shape, dtype in (({"B": 8, "S": 512, "D": 768}, "bf16"), ({"B": 4, "S": 1000, "D": 1024}, "fp32"),
                         ({"B": 16, "S": 128, "D": 4096}, "fp16")):
        out.append(E("pointwise", shape, dtype, _plain("pointwise")))
    for shape, dtype in (({"N": 4096, "D": 1024}, "fp32"), ({"N": 8192, "D": 2048}, "bf16")):
        out.append(E("adamw", shape, dtype, _adamw))
    out.append(E("conv", {"B": 16, "C": 64, "HW": 56}, "bf16", _plain("conv")))
    out.append(E("conv", {"B": 8, "C": 128, "HW": 28}, "fp32", _plain("conv")))
    # Architectures of the third harvest: Gemma (GeGLU MLP with tanh GELU,
    # RMSNorm scaled by 1 + weight, scaled embeddings), Phi-3 (fused qkv and
    # gate-up projections), ShuffleNet (channel shuffle), RegNet (grouped
    # convolutions), MLP-Mixer (token-mixing MLPs), Swin (shifted windows).
    out.append(E("gemma", {"B": 4, "S": 256}, "bf16", _hf_causal_lm("GemmaConfig", head_dim=64, **_SMALL_LM), needs=tf))
    out.append(E("phi3", {"B": 4, "S": 384}, "fp16",
                 _hf_causal_lm("Phi3Config", pad_token_id=0, bos_token_id=0, eos_token_id=0, **_SMALL_LM), needs=tf))
    out.append(E("shufflenet_v2", {"B": 32, "HW": 96}, "fp32", _vision("torchvision", "shufflenet_v2_x0_5"), needs=tv))
    out.append(E("regnet_x_400mf", {"B": 32, "HW": 64}, "bf16", _vision("torchvision", "regnet_x_400mf"), needs=tv))
    out.append(E("mixer_s16", {"B": 32, "HW": 64}, "fp16", _vision("timm", "mixer_s16_224", img_size=64), needs=tm))
    out.append(E("swin_t", {"B": 16, "HW": 64}, "bf16", _vision("torchvision", "swin_t"), needs=tv))
    # Architectures of the fourth harvest: OPT (ReLU MLP, learned positions,
    # biased LayerNorm), GPT-NeoX (parallel residual, rotary on a quarter of
    # each head), Qwen3 (RMSNorm on queries and keys), StarCoder2 (tanh-GELU
    # MLP with biases, LayerNorm), DeBERTa-v2, DistilBERT, ALBERT (see
    # _MASKED_LM_CONFIGS), DenseNet (concatenations), MnasNet, PoolFormer
    # (average-pool token mixing), DeiT, MobileViT (unfold/fold patches).
    out.append(E("opt", {"B": 4, "S": 384}, "fp16",
                 _hf_causal_lm("OPTConfig", vocab_size=8192, hidden_size=512, ffn_dim=2048, num_hidden_layers=2,
                               num_attention_heads=8, max_position_embeddings=1024, word_embed_proj_dim=512,
                               pad_token_id=0, bos_token_id=0, eos_token_id=0), needs=tf))
    out.append(E("gpt_neox", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("GPTNeoXConfig", vocab_size=8192, hidden_size=512, intermediate_size=2048,
                               num_hidden_layers=2, num_attention_heads=8, rotary_pct=0.25,
                               max_position_embeddings=1024, bos_token_id=0, eos_token_id=0), needs=tf))
    out.append(E("qwen3", {"B": 4, "S": 320}, "bf16", _hf_causal_lm("Qwen3Config", head_dim=64, **_SMALL_LM), needs=tf))
    out.append(E("starcoder2", {"B": 2, "S": 768}, "fp16",
                 _hf_causal_lm("Starcoder2Config", hidden_act="gelu_pytorch_tanh", bos_token_id=0, eos_token_id=0,
                               **{**_SMALL_LM, "intermediate_size": 2048}), needs=tf))
    _encoder = dict(vocab_size=8192, hidden_size=384, num_hidden_layers=2, num_attention_heads=6,
                    intermediate_size=1536, max_position_embeddings=512)
    out.append(E("deberta_v2", {"B": 8, "S": 256}, "bf16", _hf_model("deberta_v2", attn="eager", **_encoder), needs=tf))
    out.append(E("distilbert", {"B": 16, "S": 192}, "fp32",
                 _hf_model("distilbert", attn="eager", vocab_size=8192, dim=384, n_layers=2, n_heads=6, hidden_dim=1536,
                           max_position_embeddings=512), needs=tf))
    out.append(E("albert", {"B": 16, "S": 128}, "fp16",
                 _hf_model("albert", attn="eager", embedding_size=128, num_hidden_groups=1, **_encoder), needs=tf))
    out.append(E("densenet121", {"B": 16, "HW": 64}, "fp32", _vision("torchvision", "densenet121"), needs=tv))
    out.append(E("mnasnet0_5", {"B": 32, "HW": 96}, "bf16", _vision("torchvision", "mnasnet0_5"), needs=tv))
    out.append(E("poolformer_s12", {"B": 16, "HW": 64}, "bf16", _vision("timm", "poolformer_s12"), needs=tm))
    out.append(E("deit_tiny", {"B": 32, "HW": 64}, "fp16", _vision("timm", "deit_tiny_patch16_224", img_size=64), needs=tm))
    out.append(E("mobilevit_xxs", {"B": 16, "HW": 128}, "fp32", _vision("timm", "mobilevit_xxs"), needs=tm))
    # Programs of the fifth harvest: Falcon (multi-query attention, parallel
    # attention and MLP), BLOOM (ALiBi position biases), GPT-J (interleaved
    # rotary on part of each head), Phi (partial rotary, one LayerNorm per
    # block), OLMo-2 (RMSNorm after attention and MLP, norms on the whole
    # query and key projections), BART (biased LayerNorm, GELU), wav2vec 2.0
    # (strided 1-D convolutions over raw audio, GroupNorm over time, a
    # grouped positional convolution), DINOv2 (layer scale), NF-ResNet (scaled
    # weight standardisation: reductions over weights), XCiT (attention across
    # channels, L2-normalised queries and keys), ResMLP (affine
    # normalisation), GhostNet (cheap-operation concatenations, hard-sigmoid
    # excitation), LeViT (attention with batch norm), MobileNetV2 (ReLU6),
    # SqueezeNet (fire-module concatenations), and a diffusion U-Net block
    # written here (GroupNorm + SiLU, timestep embedding, spatial attention).
    out.append(E("falcon", {"B": 4, "S": 384}, "fp16",
                 _hf_causal_lm("FalconConfig", vocab_size=8192, hidden_size=512, num_hidden_layers=2, num_attention_heads=8,
                               multi_query=True, parallel_attn=True, new_decoder_architecture=False, bias=False,
                               alibi=False, bos_token_id=0, eos_token_id=0), needs=tf))
    out.append(E("bloom", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("BloomConfig", attn="eager", vocab_size=8192, hidden_size=512, n_layer=2, n_head=8,
                               bos_token_id=0, eos_token_id=0), needs=tf))
    out.append(E("gptj", {"B": 4, "S": 256}, "fp16",
                 _hf_causal_lm("GPTJConfig", attn="eager", vocab_size=8192, n_embd=512, n_layer=2, n_head=8, rotary_dim=32,
                               n_positions=1024, bos_token_id=0, eos_token_id=0), needs=tf))
    out.append(E("phi", {"B": 4, "S": 320}, "bf16",
                 _hf_causal_lm("PhiConfig", partial_rotary_factor=0.5, **{**_SMALL_LM, "intermediate_size": 2048}), needs=tf))
    out.append(E("olmo2", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("Olmo2Config", pad_token_id=0, bos_token_id=0, eos_token_id=0, **_SMALL_LM), needs=tf))
    out.append(E("bart", {"B": 8, "S": 192}, "fp16",
                 _hf_model("bart", vocab_size=8192, d_model=384, encoder_layers=2, decoder_layers=2,
                           encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                           decoder_ffn_dim=1536, max_position_embeddings=512, pad_token_id=1, bos_token_id=0,
                           eos_token_id=2, decoder_start_token_id=2), needs=tf))
    out.append(E("wav2vec2", {"B": 8, "T": 16000}, "fp32",
                 _hf_model("wav2vec2", hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024,
                           conv_dim=(256,) * 7, feat_extract_norm="group", num_conv_pos_embeddings=64,
                           num_conv_pos_embedding_groups=16, mask_time_prob=0.0, num_labels=10,
                           classifier_proj_size=128), needs=tf))
    out.append(E("dinov2", {"B": 32}, "bf16",
                 _hf_model("dinov2", image_size=112, patch_size=14, hidden_size=384, num_hidden_layers=2,
                           num_attention_heads=6, num_labels=100), needs=tf))
    out.append(E("nf_resnet26", {"B": 16, "HW": 96}, "fp32", _vision("timm", "nf_resnet26"), needs=tm))
    out.append(E("xcit_nano", {"B": 32, "HW": 96}, "fp16", _vision("timm", "xcit_nano_12_p16_224", img_size=96), needs=tm))
    out.append(E("resmlp_12", {"B": 32, "HW": 64}, "bf16", _vision("timm", "resmlp_12_224", img_size=64), needs=tm))
    out.append(E("ghostnet", {"B": 32, "HW": 96}, "fp32", _vision("timm", "ghostnet_100"), needs=tm))
    out.append(E("levit_128s", {"B": 32, "HW": 128}, "fp16", _vision("timm", "levit_128s", img_size=128), needs=tm))
    out.append(E("mobilenet_v2", {"B": 32, "HW": 96}, "bf16", _vision("torchvision", "mobilenet_v2"), needs=tv))
    out.append(E("squeezenet1_1", {"B": 32, "HW": 128}, "fp32", _vision("torchvision", "squeezenet1_1"), needs=tv))
    for shape, dtype in (({"B": 8, "C": 128, "HW": 32}, "bf16"), ({"B": 4, "C": 256, "HW": 16}, "fp16"),
                         ({"B": 16, "C": 64, "HW": 64}, "fp32")):
        out.append(E("unet_block", shape, dtype, _plain("unet_block")))
    # Programs of the sixth harvest: Whisper (log-mel front end of strided
    # 1-D convolutions with GELU, sinusoidal positions, cross-attention),
    # CLIP (quick-GELU towers, end-of-text pooling, normalised embeddings,
    # a B x B contrastive loss both ways), SegFormer (attention over
    # keys reduced by a strided convolution, Mix-FFN with a depthwise
    # convolution, bilinear upsampling of four scales, a per-pixel loss),
    # MobileBERT, ConvBERT (see _MASKED_LM_CONFIGS), BEiT, Swin V2 (see
    # _IMAGE_CLS_CONFIGS), Qwen2-MoE (eight experts with a sigmoid-gated
    # shared expert, the router's load-balancing loss), Llama with 128-wide
    # heads (grouped-query attention 4:1), ConvNeXt V2 (global response
    # normalisation), EVA-02 (2-D rotary positions in a ViT, SwiGLU with a
    # sub-LayerNorm), CaiT (talking-heads attention, class attention),
    # CoaT (convolutional relative positions, factorised attention,
    # interpolation between scales), HRNet (parallel resolutions fused by
    # nearest upsampling and strided convolutions), ReXNet (residuals
    # added to part of the channels), Res2Net (hierarchical split
    # convolutions), FastViT (reparameterisable multi-branch convolutions,
    # RepMixer), gMLP (spatial gating unit), MaxViT (block and grid
    # attention with relative position bias, stochastic depth), Inception v3
    # (factorised 1x7 / 7x1 convolutions, pooling branches), and two
    # written here: a VQ-VAE codebook (argmin over code distances,
    # straight-through gradients) and a Mamba-2 chunked state-space scan.
    out.append(E("whisper", {"B": 8, "S": 96}, "fp16",
                 _hf_model("whisper", vocab_size=8192, num_mel_bins=80, d_model=384, encoder_layers=2, decoder_layers=2,
                           encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                           decoder_ffn_dim=1536, max_source_positions=500, max_target_positions=448, pad_token_id=0,
                           bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, suppress_tokens=None,
                           begin_suppress_tokens=None), needs=tf))
    out.append(E("clip", {"B": 64, "S": 77}, "bf16",
                 _hf_model("clip", projection_dim=256,
                           text_config=dict(vocab_size=8192, hidden_size=384, intermediate_size=1536,
                                            num_hidden_layers=2, num_attention_heads=6, max_position_embeddings=77,
                                            pad_token_id=0, bos_token_id=1, eos_token_id=2),
                           vision_config=dict(image_size=96, patch_size=16, hidden_size=384, intermediate_size=1536,
                                              num_hidden_layers=2, num_attention_heads=6)), needs=tf))
    out.append(E("segformer", {"B": 8, "HW": 128}, "fp32",
                 _hf_model("segformer", num_labels=19, depths=[2, 2, 2, 2]), needs=tf))
    out.append(E("mobilebert", {"B": 16, "S": 128}, "fp16",
                 _hf_model("mobilebert", vocab_size=8192, num_hidden_layers=2, max_position_embeddings=512), needs=tf))
    out.append(E("convbert", {"B": 8, "S": 256}, "bf16",
                 _hf_model("convbert", attn="eager", embedding_size=384, **_encoder), needs=tf))
    out.append(E("beit", {"B": 32}, "bf16",
                 _hf_model("beit", attn="eager", image_size=96, patch_size=8, hidden_size=384, num_hidden_layers=2,
                           num_attention_heads=6, intermediate_size=1536, use_relative_position_bias=True,
                           use_mean_pooling=True, layer_scale_init_value=0.1, num_labels=100), needs=tf))
    out.append(E("swinv2", {"B": 16}, "fp16",
                 _hf_model("swinv2", attn="eager", image_size=128, patch_size=4, embed_dim=96, depths=[2, 2],
                           num_heads=[3, 6], window_size=8, num_labels=100), needs=tf))
    out.append(E("qwen2_moe", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("Qwen2MoeConfig", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=352,
                               shared_expert_intermediate_size=1408, output_router_logits=True, **_SMALL_LM), needs=tf))
    out.append(E("llama_hd128", {"B": 2, "S": 512}, "fp16",
                 _hf_causal_lm("LlamaConfig", **{**_SMALL_LM, "hidden_size": 1024, "intermediate_size": 2816,
                                                 "num_attention_heads": 8, "num_key_value_heads": 2}), needs=tf))
    out.append(E("convnextv2_atto", {"B": 32, "HW": 96}, "fp32", _vision("timm", "convnextv2_atto"), needs=tm))
    out.append(E("eva02_tiny", {"B": 32, "HW": 112}, "bf16",
                 _vision("timm", "eva02_tiny_patch14_224", img_size=112), needs=tm))
    out.append(E("cait_xxs", {"B": 32, "HW": 96}, "fp16",
                 _vision("timm", "cait_xxs24_224", img_size=96, depth=2), needs=tm))
    out.append(E("coat_tiny", {"B": 16, "HW": 128}, "fp32",
                 _vision("timm", "coat_tiny", img_size=128, parallel_depth=2), needs=tm))
    out.append(E("hrnet_w18_small", {"B": 16, "HW": 128}, "bf16", _vision("timm", "hrnet_w18_small"), needs=tm))
    out.append(E("rexnet_100", {"B": 32, "HW": 96}, "fp16", _vision("timm", "rexnet_100"), needs=tm))
    out.append(E("res2net50", {"B": 16, "HW": 64}, "fp32", _vision("timm", "res2net50_26w_4s"), needs=tm))
    out.append(E("fastvit_t8", {"B": 16, "HW": 128}, "bf16", _vision("timm", "fastvit_t8"), needs=tm))
    out.append(E("gmlp_ti16", {"B": 32, "HW": 128}, "fp16", _vision("timm", "gmlp_ti16_224", img_size=128), needs=tm))
    out.append(E("maxvit_t", {"B": 4, "HW": 224}, "bf16", _vision("torchvision", "maxvit_t"), needs=tv))
    out.append(E("inception_v3", {"B": 16, "HW": 128}, "fp16",
                 _vision("torchvision", "inception_v3", aux_logits=False, init_weights=False), needs=tv))
    out.append(E("vq_codebook", {"B": 16, "T": 256, "D": 256, "K": 1024}, "fp32", _plain("vq_codebook")))
    out.append(E("vq_codebook", {"B": 8, "T": 512, "D": 512, "K": 4096}, "bf16", _plain("vq_codebook")))
    out.append(E("ssd_scan", {"B": 4, "S": 1024, "D": 512}, "bf16", _plain("ssd_scan")))
    out.append(E("ssd_scan", {"B": 8, "S": 512, "D": 256}, "fp32", _plain("ssd_scan")))
    # Programs of the seventh harvest: Mamba (the selective state-space scan
    # as an associative scan with a custom combine over the sequence, a
    # causal depthwise convolution, softplus step sizes, a SiLU gate),
    # Gemma 2 (tanh soft-capping of attention scores and of the logits,
    # sliding-window layers beside global ones, RMSNorm before and after
    # each sub-block), Cohere (LayerNorm without bias and per-head
    # LayerNorm on queries and keys, parallel attention and MLP, scaled
    # logits), StableLM (rotary on a quarter of each head, per-head
    # LayerNorm on queries and keys), Nemotron (squared-ReLU MLP, LayerNorm
    # scaled by 1 + weight, rotary on half of each head), Funnel (see
    # _MASKED_LM_CONFIGS), Perceiver (see _IMAGE_CLS_CONFIGS), the
    # wav2vec 2.0 Conformer (see _AUDIO_CLS_CONFIGS), VOLO (outlook
    # attention: attention weights predicted per position, applied to
    # unfolded 3 x 3 neighbourhoods and folded back), HaloNet (attention
    # within blocks over keys from overlapping haloed windows, relative
    # position logits), LambdaNet (lambda layers: a softmax over keys along
    # the sequence, content lambdas, position lambdas from a 3-D
    # convolution), MobileViT V2 (separable linear attention: a softmax of
    # one context score per token), EfficientViT (ReLU linear attention
    # with multi-scale depthwise aggregation, hard-swish), FocalNet (focal
    # modulation: a hierarchy of depthwise convolutions with GELU, gated
    # sums, a global average context), MViT V2 (pooling attention with
    # strided depthwise convolutions on queries, keys and values,
    # decomposed relative positions), R(2+1)D (3-D convolutions factorised
    # into spatial and temporal ones, BatchNorm3d, over video clips), LR-ASPP
    # (a MobileNetV3 backbone, a sigmoid-gated pooled branch, bilinear
    # upsampling, a per-pixel loss), and four written here: graph attention
    # (GCN and GAT layers: index_add by edge targets, edge softmax by
    # segment max and sum), a DLRM recommender (weighted sum embedding
    # bags, pairwise dot interactions), a NeRF field (sin/cos encodings,
    # volume rendering by a cumulative product of transmittance) and a
    # PointNet (per-point MLPs, max pooling over points, a learned feature
    # transform with an orthogonality penalty).
    out.append(E("mamba", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("MambaConfig", attn="eager", vocab_size=8192, hidden_size=512, state_size=16,
                               num_hidden_layers=2, expand=2, conv_kernel=4, pad_token_id=0, bos_token_id=0,
                               eos_token_id=0), needs=tf))
    out.append(E("gemma2", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("Gemma2Config", attn="eager", head_dim=64, sliding_window=128,
                               query_pre_attn_scalar=64, **_SMALL_LM), needs=tf))
    out.append(E("cohere", {"B": 4, "S": 320}, "fp16",
                 _hf_causal_lm("CohereConfig", use_qk_norm=True, pad_token_id=0, bos_token_id=0, eos_token_id=0,
                               **_SMALL_LM), needs=tf))
    out.append(E("stablelm", {"B": 2, "S": 384}, "fp32",
                 _hf_causal_lm("StableLmConfig", partial_rotary_factor=0.25, qk_layernorm=True, bos_token_id=0,
                               eos_token_id=0, **_SMALL_LM), needs=tf))
    out.append(E("nemotron", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("NemotronConfig", head_dim=64, partial_rotary_factor=0.5, pad_token_id=0, bos_token_id=0,
                               eos_token_id=0, **{**_SMALL_LM, "intermediate_size": 2048}), needs=tf))
    out.append(E("funnel", {"B": 8, "S": 256}, "fp32",
                 _hf_model("funnel", attn="eager", vocab_size=8192, block_sizes=[1, 1, 1], num_decoder_layers=1,
                           d_model=384, n_head=6, d_head=64, d_inner=1536, initializer_std=0.02,
                           max_position_embeddings=512), needs=tf))
    out.append(E("perceiver", {"B": 16}, "fp16",
                 _hf_model("perceiver", attn="eager", architectures=["PerceiverForImageClassificationLearned"],
                           image_size=64, d_model=512, num_latents=256, d_latents=512,
                           num_self_attends_per_block=2, num_self_attention_heads=8, num_cross_attention_heads=1,
                           num_labels=100), needs=tf))
    out.append(E("wav2vec2_conformer", {"B": 8, "T": 16000}, "bf16",
                 _hf_model("wav2vec2_conformer", attn="eager", hidden_size=256, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=1024, conv_dim=(256,) * 7,
                           feat_extract_norm="layer", position_embeddings_type="relative",
                           conv_depthwise_kernel_size=31, mask_time_prob=0.0, num_labels=10,
                           classifier_proj_size=128), needs=tf))
    out.append(E("volo_d1", {"B": 16, "HW": 96}, "bf16", _vision("timm", "volo_d1_224", img_size=96), needs=tm))
    out.append(E("halonet26t", {"B": 8, "HW": 256}, "fp16", _vision("timm", "halonet26t"), needs=tm))
    out.append(E("lambda_resnet26t", {"B": 16, "HW": 128}, "fp32", _vision("timm", "lambda_resnet26t"), needs=tm))
    out.append(E("mobilevitv2_050", {"B": 32, "HW": 128}, "fp16", _vision("timm", "mobilevitv2_050"), needs=tm))
    out.append(E("efficientvit_b0", {"B": 32, "HW": 128}, "bf16", _vision("timm", "efficientvit_b0"), needs=tm))
    out.append(E("focalnet_tiny", {"B": 16, "HW": 96}, "fp32", _vision("timm", "focalnet_tiny_srf"), needs=tm))
    out.append(E("mvitv2_tiny", {"B": 16, "HW": 96}, "fp16", _vision("timm", "mvitv2_tiny", img_size=96), needs=tm))
    out.append(E("r2plus1d_18", {"B": 4, "T": 8, "HW": 64}, "bf16", _vision_task("video", "r2plus1d_18", 100),
                 needs=tv))
    out.append(E("lraspp_mobilenet_v3", {"B": 8, "HW": 128}, "fp32",
                 _vision_task("segmentation", "lraspp_mobilenet_v3_large", 21), needs=tv))
    out.append(E("graph_attention", {"N": 8192, "E": 131072, "D": 256}, "fp32", _plain("graph_attention")))
    out.append(E("dlrm", {"B": 4096, "V": 20000}, "fp16", _plain("dlrm")))
    out.append(E("nerf", {"N": 2048, "S": 128}, "bf16", _plain("nerf")))
    out.append(E("pointnet", {"B": 16, "N": 2048}, "fp16", _plain("pointnet")))
    # Programs of the eighth harvest: DeepSeek-V3 (multi-head latent
    # attention: low-rank query and key-value compressions, rotary on a
    # separate part of each head; a mixture of experts routed by sigmoid
    # scores with group-limited top-k, a shared expert), DiffLlama
    # (differential attention: the difference of two softmax maps scaled by
    # a learned lambda, GroupNorm per head), gpt-oss (attention sinks,
    # sliding-window layers between full ones, experts with a clamped
    # SwiGLU), LFM2 (gated short causal convolutions between attention
    # layers), OLMoE (top-2 routing over eight experts, RMSNorm on
    # queries and keys), Granite (embedding, residual, attention and logit
    # multipliers), the encoders, audio model and forecasters of
    # _MASKED_LM_CONFIGS, _AUDIO_CLS_CONFIGS and _FORECAST_CONFIGS (ModernBERT,
    # RoFormer, Nystromformer, SqueezeBERT, WavLM, PatchTST, PatchTSMixer),
    # TinyViT (MBConv stages, window attention with attention biases),
    # EdgeNeXt (split depthwise transposed attention across channels),
    # DaViT (window attention beside channel-group attention), StarNet
    # (element-wise products of two branches), MambaOut (gated convolution
    # blocks), InceptionNeXt (depthwise convolutions split into square, 1 x k
    # and k x 1 bands), HGNetV2 (learnable affine blocks, light ESE
    # attention), GhostNetV2 (decoupled fully-connected attention by
    # horizontal and vertical depthwise convolutions), RepViT, CSPDarkNet
    # (Mish, cross-stage partial splits), DLA (iterative deep aggregation),
    # EfficientFormerV2 (attention with talking heads and strided queries),
    # Hiera (mask-unit attention over unrolled windows), and torchvision's
    # DeepLabV3 (atrous spatial pyramid pooling) and Video Swin (3-D shifted
    # window attention).
    moe_lm = dict(vocab_size=8192, hidden_size=512, num_hidden_layers=2, num_attention_heads=8,
                  max_position_embeddings=2048, pad_token_id=0, bos_token_id=0, eos_token_id=0)
    out.append(E("deepseek_v3", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("DeepseekV3Config", attn="eager", intermediate_size=1408, moe_intermediate_size=256,
                               num_key_value_heads=8, n_shared_experts=1, n_routed_experts=8, num_experts_per_tok=2,
                               n_group=2, topk_group=1, first_k_dense_replace=1, kv_lora_rank=128, q_lora_rank=192,
                               qk_rope_head_dim=32, qk_nope_head_dim=64, v_head_dim=64, **moe_lm), needs=tf))
    out.append(E("diffllama", {"B": 4, "S": 256}, "fp16",
                 _hf_causal_lm("DiffLlamaConfig", attn="eager", pad_token_id=0, bos_token_id=0, eos_token_id=0,
                               **_SMALL_LM), needs=tf))
    out.append(E("gpt_oss", {"B": 2, "S": 512}, "bf16",
                 _hf_causal_lm("GptOssConfig", attn="eager", intermediate_size=512, head_dim=64, num_key_value_heads=2,
                               num_local_experts=8, num_experts_per_tok=2, sliding_window=128,
                               **{**moe_lm, "max_position_embeddings": 131072}), needs=tf))
    out.append(E("lfm2", {"B": 4, "S": 384}, "fp16",
                 _hf_causal_lm("Lfm2Config", pad_token_id=0, bos_token_id=0, eos_token_id=0,
                               layer_types=["conv", "full_attention", "conv", "full_attention"],
                               **{**_SMALL_LM, "num_hidden_layers": 4}), needs=tf))
    out.append(E("olmoe", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("OlmoeConfig", intermediate_size=512, num_key_value_heads=8, num_experts=8,
                               num_experts_per_tok=2, **moe_lm), needs=tf))
    out.append(E("granite", {"B": 4, "S": 320}, "fp32",
                 _hf_causal_lm("GraniteConfig", embedding_multiplier=12.0, residual_multiplier=0.22,
                               attention_multiplier=0.0078125, logits_scaling=8.0, pad_token_id=0, bos_token_id=0,
                               eos_token_id=0, **_SMALL_LM), needs=tf))
    encoder = dict(vocab_size=8192, hidden_size=384, num_hidden_layers=2, num_attention_heads=6, intermediate_size=1536)
    out.append(E("modernbert", {"B": 8, "S": 512}, "bf16",
                 _hf_model("modernbert", attn="eager", local_attention=128, pad_token_id=0, eos_token_id=1,
                           bos_token_id=2, cls_token_id=3, sep_token_id=4, max_position_embeddings=1024,
                           **{**encoder, "num_hidden_layers": 3, "intermediate_size": 1152}), needs=tf))
    out.append(E("roformer", {"B": 16, "S": 256}, "fp16",
                 _hf_model("roformer", attn="eager", embedding_size=384, max_position_embeddings=512, **encoder),
                 needs=tf))
    out.append(E("nystromformer", {"B": 8, "S": 512}, "fp32",
                 _hf_model("nystromformer", attn="eager", num_landmarks=64, segment_means_seq_len=512,
                           max_position_embeddings=1024, **encoder), needs=tf))
    out.append(E("squeezebert", {"B": 16, "S": 256}, "bf16",
                 _hf_model("squeezebert", attn="eager", embedding_size=384, q_groups=4, k_groups=4, v_groups=4,
                           post_attention_groups=1, intermediate_groups=4, output_groups=4,
                           max_position_embeddings=512, **encoder), needs=tf))
    # bf16, not fp16: the weight-normalised positional convolution's backward
    # (aten._weight_norm_interface_backward) wants float norms, which
    # Inductor's decomposition of the forward keeps for bf16 weights only
    out.append(E("wavlm", {"B": 8, "T": 16000}, "bf16",
                 _hf_model("wavlm", attn="eager", hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=1024, conv_dim=(256,) * 7, feat_extract_norm="layer",
                           mask_time_prob=0.0, num_labels=10, classifier_proj_size=128), needs=tf))
    out.append(E("patchtst", {"B": 64}, "fp32",
                 _hf_model("patchtst", num_input_channels=7, context_length=512, patch_length=16, patch_stride=8,
                           prediction_length=96, d_model=128, num_attention_heads=8, num_hidden_layers=3,
                           ffn_dim=256), needs=tf))
    out.append(E("patchtsmixer", {"B": 64}, "bf16",
                 _hf_model("patchtsmixer", num_input_channels=7, context_length=512, patch_length=16, patch_stride=8,
                           prediction_length=96, d_model=64, num_layers=4, gated_attn=True, self_attn=True,
                           self_attn_heads=4, mode="mix_channel"), needs=tf))
    for name, shape, dtype, timm_name in (
            ("tiny_vit_5m", {"B": 16, "HW": 224}, "fp16", "tiny_vit_5m_224"),
            ("edgenext_xx_small", {"B": 32, "HW": 128}, "bf16", "edgenext_xx_small"),
            ("davit_tiny", {"B": 16, "HW": 128}, "fp32", "davit_tiny"),
            ("starnet_s1", {"B": 32, "HW": 128}, "fp16", "starnet_s1"),
            ("mambaout_femto", {"B": 32, "HW": 128}, "bf16", "mambaout_femto"),
            ("inception_next_tiny", {"B": 16, "HW": 128}, "fp16", "inception_next_tiny"),
            ("hgnetv2_b0", {"B": 32, "HW": 128}, "fp32", "hgnetv2_b0"),
            ("ghostnetv2_100", {"B": 32, "HW": 128}, "bf16", "ghostnetv2_100"),
            ("repvit_m0_9", {"B": 32, "HW": 128}, "fp16", "repvit_m0_9"),
            ("cspdarknet53", {"B": 16, "HW": 128}, "bf16", "cspdarknet53"),
            ("dla34", {"B": 32, "HW": 96}, "fp32", "dla34"),
            ("efficientformerv2_s0", {"B": 16, "HW": 224}, "fp16", "efficientformerv2_s0"),
            ("hiera_tiny", {"B": 16, "HW": 224}, "bf16", "hiera_tiny_224")):
        out.append(E(name, shape, dtype, _vision("timm", timm_name), needs=tm))
    out.append(E("deeplabv3_mobilenet_v3", {"B": 8, "HW": 128}, "fp16",
                 _vision_task("segmentation", "deeplabv3_mobilenet_v3_large", 21, aux_loss=False), needs=tv))
    out.append(E("swin3d_t", {"B": 2, "T": 8, "HW": 64}, "bf16", _vision_task("video", "swin3d_t", 100), needs=tv))
    # Programs of the ninth harvest: Qwen3-Next (gated DeltaNet layers: a
    # chunked delta-rule recurrence over L2-normalised queries and keys with
    # a causal depthwise convolution, beside full attention with a sigmoid
    # output gate; experts with a gated shared expert), MiniMax (lightning
    # attention: linear attention by blocks with per-head exponential
    # decay, a state carried between blocks), Gemma 3n (AltUp: four
    # predicted and corrected copies of the residual stream, LAuReL low-rank
    # residuals, per-layer input embeddings, activation sparsity by a
    # Gaussian top-k threshold, key-value sharing across layers), Llama 4
    # (attention within chunks, NoPE layers with attention temperature
    # tuning, L2-normalised queries and keys, a sigmoid-routed expert beside
    # a shared one), JetMoE (a mixture of attention heads: experts chosen
    # per token for the query and output projections), XLNet (relative
    # attention over sinusoidal relative encodings with content and
    # position biases and a relative shift, written with einsum), Switch
    # Transformers (top-1 routing with an expert capacity from a cumulative
    # sum, T5's bucketed relative positions), LongT5
    # (transient-global attention: local blocks plus global tokens summed
    # per block of 16), Longformer (sliding-window attention by overlapping
    # chunks and diagonal shifts), SigLIP (a pairwise sigmoid loss with a
    # learned bias, attention-pooling head), SEW-D and CvT (see
    # _AUDIO_CLS_CONFIGS and _IMAGE_CLS_CONFIGS: squeezed frames with
    # disentangled attention; convolutional projections of queries, keys
    # and values), Sequencer2D (bidirectional LSTMs along rows and columns
    # in place of attention), CrossViT (two patch sizes, the second on a
    # bicubic-resized image, fused by cross-attention of class tokens),
    # Twins-SVT (locally grouped attention in windows alternating with
    # attention to sub-sampled keys, a convolutional position generator),
    # ResNeSt (split attention: a softmax over radix groups), TNT (a
    # transformer over the pixels inside each patch within one over
    # patches), MobileNetV4 hybrid (universal inverted bottlenecks, mobile
    # multi-query attention over strided keys and values), ConViT (gated
    # positional self-attention: a per-head sigmoid gate between content
    # and relative-position attention), and torchvision's RAFT (an all-pairs
    # correlation pyramid sampled by grid_sample around the current flow,
    # a convolutional GRU refining it six times, the sequence loss).
    lm9 = dict(vocab_size=8192, hidden_size=512, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2,
               max_position_embeddings=2048, pad_token_id=0, bos_token_id=0, eos_token_id=0)
    out.append(E("qwen3_next", {"B": 4, "S": 256}, "bf16",
                 _hf_causal_lm("Qwen3NextConfig", head_dim=64, intermediate_size=1408,
                               layer_types=["linear_attention", "full_attention"], linear_num_key_heads=4,
                               linear_num_value_heads=8, linear_key_head_dim=64, linear_value_head_dim=64,
                               num_experts=8, num_experts_per_tok=2, moe_intermediate_size=256,
                               shared_expert_intermediate_size=512, **lm9), needs=tf))
    out.append(E("minimax", {"B": 2, "S": 512}, "fp16",
                 _hf_causal_lm("MiniMaxConfig", head_dim=64, intermediate_size=704, num_local_experts=4,
                               num_experts_per_tok=2, block_size=256,
                               layer_types=["linear_attention", "full_attention"], **lm9), needs=tf))
    out.append(E("gemma3n", {"B": 2, "S": 256}, "bf16",
                 _hf_causal_lm("Gemma3nTextConfig", head_dim=64, intermediate_size=1024, vocab_size_per_layer_input=8192,
                               hidden_size_per_layer_input=64, laurel_rank=32, altup_num_inputs=4,
                               num_kv_shared_layers=2, sliding_window=128,
                               layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                            "full_attention"],
                               activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0],
                               **{**lm9, "num_hidden_layers": 4, "bos_token_id": 2, "eos_token_id": 1}), needs=tf))
    out.append(E("llama4", {"B": 2, "S": 512}, "bf16",
                 _hf_causal_lm("Llama4TextConfig", head_dim=64, intermediate_size=512, intermediate_size_mlp=1408,
                               num_local_experts=4, num_experts_per_tok=1, attention_chunk_size=256,
                               layer_types=["chunked_attention", "full_attention"], no_rope_layers=[1, 0],
                               floor_scale=256, **lm9), needs=tf))
    out.append(E("jetmoe", {"B": 4, "S": 256}, "fp16",
                 _hf_causal_lm("JetMoeConfig", kv_channels=64, intermediate_size=704, num_local_experts=4,
                               num_experts_per_tok=2, **{**lm9, "num_key_value_heads": 4}), needs=tf))
    out.append(E("xlnet", {"B": 4, "S": 256}, "fp32",
                 _hf_causal_lm("XLNetConfig", attn="eager", vocab_size=8192, d_model=512, n_layer=2, n_head=8,
                               d_inner=2048, mem_len=None, pad_token_id=0, bos_token_id=0, eos_token_id=0),
                 needs=tf))
    out.append(E("switch_transformers", {"B": 8, "S": 128}, "bf16",
                 _hf_model("switch_transformers", vocab_size=8192, d_model=512, d_ff=1024, d_kv=64, num_layers=2,
                           num_decoder_layers=2, num_heads=8, num_experts=8, expert_capacity=128,
                           num_sparse_encoder_layers=1, num_sparse_decoder_layers=1, encoder_sparse_step=2,
                           decoder_sparse_step=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1),
                 needs=tf))
    out.append(E("longt5_tglobal", {"B": 4, "S": 512}, "fp32",
                 _hf_model("longt5", vocab_size=8192, d_model=512, d_ff=1024, d_kv=64, num_layers=2,
                           num_decoder_layers=2, num_heads=8, encoder_attention_type="transient-global",
                           local_radius=127, global_block_size=16, decoder_start_token_id=0, pad_token_id=0,
                           eos_token_id=1), needs=tf))
    out.append(E("longformer", {"B": 4, "S": 1024}, "fp16",
                 _hf_model("longformer", attn="eager", attention_window=256, vocab_size=8192, hidden_size=384,
                           num_hidden_layers=2, num_attention_heads=6, intermediate_size=1536,
                           max_position_embeddings=1026), needs=tf))
    out.append(E("siglip", {"B": 64, "S": 64}, "fp16",
                 _hf_model("siglip",
                           text_config=dict(vocab_size=8192, hidden_size=384, intermediate_size=1536,
                                            num_hidden_layers=2, num_attention_heads=6, max_position_embeddings=64,
                                            pad_token_id=0, bos_token_id=1, eos_token_id=2),
                           vision_config=dict(image_size=96, patch_size=16, hidden_size=384, intermediate_size=1536,
                                              num_hidden_layers=2, num_attention_heads=6)), needs=tf))
    out.append(E("sew_d", {"B": 8, "T": 16000}, "fp32",
                 _hf_model("sew_d", attn="eager", hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=1024,
                           conv_dim=(64, 128, 128, 128, 128, 256, 256, 256, 256, 256, 256, 256, 256), squeeze_factor=2,
                           position_buckets=128, max_position_embeddings=256, mask_time_prob=0.0, num_labels=10,
                           classifier_proj_size=128), needs=tf))
    # depth [1, 2, 3]: CvT's stages index their drop-path rates by stage,
    # so stage i needs more than i layers
    out.append(E("cvt", {"B": 16, "HW": 128}, "bf16",
                 _hf_model("cvt", attn="eager", embed_dim=[64, 192, 384], depth=[1, 2, 3], num_heads=[1, 3, 6],
                           num_labels=100), needs=tf))
    for name, shape, dtype, timm_name, kw in (
            ("sequencer2d_s", {"B": 16, "HW": 128}, "fp32", "sequencer2d_s", {}),
            ("crossvit_9", {"B": 16, "HW": 240}, "bf16", "crossvit_9_240", {}),
            ("twins_svt_small", {"B": 16, "HW": 128}, "fp16", "twins_svt_small", {}),
            ("resnest14d", {"B": 32, "HW": 128}, "bf16", "resnest14d", {}),
            ("tnt_s", {"B": 16, "HW": 96}, "fp16", "tnt_s_patch16_224", {"img_size": 96}),
            ("mobilenetv4_hybrid_medium", {"B": 32, "HW": 128}, "fp32", "mobilenetv4_hybrid_medium", {}),
            ("convit_tiny", {"B": 32, "HW": 96}, "fp32", "convit_tiny", {"img_size": 96})):
        out.append(E(name, shape, dtype, _vision("timm", timm_name, **kw), needs=tm))
    out.append(E("raft_small", {"B": 4, "HW": 128}, "fp32", _vision_task("flow", "raft_small", 0, updates=6),
                 needs=tv))
    # matmul templates come from max-autotune: Inductor then writes Triton
    # GEMMs (and benchmarks them against cuBLAS).
    maxat = "max-autotune-no-cudagraphs"
    for shape, dtype in (({"M": 4096, "K": 1024, "N": 2816}, "bf16"), ({"M": 2000, "K": 768, "N": 3072}, "fp16"),
                         ({"M": 1024, "K": 512, "N": 1024}, "fp32")):
        out.append(E("mlp", shape, dtype, _plain("mlp"), mode=maxat))
    out.append(E("mlp", {"M": 8192, "K": 512, "N": 1536}, "bf16", _plain("mlp")))
    out.append(E("conv", {"B": 16, "C": 64, "HW": 32}, "fp16", _plain("conv"), mode=maxat))
    # several sizes through one compiled program: the kernels of torch's
    # automatic dynamic shapes, each captured at three sizes
    dyn = (
        ("llama", {"B": 4, "S": 256}, "bf16", llama, "S", (384, 512, 768), tf),
        ("qwen2", {"B": 2, "S": 512}, "fp16", qwen, "S", (640, 800, 1000), tf),
        ("gpt2", {"B": 4, "S": 256}, "fp16", gpt2, "S", (320, 512, 1000), tf),
        ("bert", {"B": 8, "S": 128}, "fp32", bert, "S", (200, 256, 384), tf),
        ("t5", {"B": 8, "S": 128}, "bf16", t5, "S", (192, 256, 384), tf),
        ("vit", {"B": 16}, "bf16", vit, "B", (24, 32, 48), tf),
        ("resnet18", {"B": 16, "HW": 64}, "fp16", _vision("torchvision", "resnet18"), "B", (24, 32, 48), tv),
        ("convnext_atto", {"B": 8, "HW": 96}, "bf16", _vision("timm", "convnext_atto"), "B", (12, 16, 24), tm),
        ("losses", {"N": 1024, "V": 32000}, "bf16", _plain("losses"), "N", (1536, 2048, 3000), ()),
        ("norms", {"B": 8, "C": 128, "HW": 28}, "fp32", _plain("norms"), "B", (12, 16, 32), ()),
        ("attention", {"B": 2, "H": 8, "S": 256, "D": 64}, "fp16", _plain("attention"), "S", (384, 512, 1024), ()),
        ("gather_scatter", {"N": 2048, "D": 256, "V": 50000}, "fp32", _plain("gather_scatter"), "N", (3000, 4096, 8192), ()),
        ("mlp", {"M": 1024, "K": 1024, "N": 2816}, "bf16", _plain("mlp"), "M", (1536, 2048, 4096), ()),
        ("pointwise", {"B": 4, "S": 512, "D": 1024}, "bf16", _plain("pointwise"), "B", (6, 8, 16), ()),
        ("conv", {"B": 8, "C": 64, "HW": 32}, "bf16", _plain("conv"), "B", (12, 16, 32), ()),
    )
    for program, shape, dtype, build, dim, values, needs in dyn:
        out.append(E(program, shape, dtype, build, needs=needs, sizes=tuple({dim: v} for v in values)))
    return out


ZOO: tuple[ZooEntry, ...] = tuple(_entries())


def get_entry(name: str) -> ZooEntry:
    for e in ZOO:
        if e.name == name:
            return e
    raise ValueError(f"unknown zoo entry {name!r}; `learned-cost harvest --list` lists them")
