"""Which of the PyTorch names that attention code and the tutorials use does minigrad have?

    python tools/api_census.py               # one line per group, then the total ("N/M present")
    python tools/api_census.py --missing     # also list the names minigrad lacks
    python tools/api_census.py --strict      # exit 1 if any name is missing (the suite runs this)
    python tools/api_census.py --check-torch # first check that every listed name is PyTorch's own

The list is issue 13's census: the names nanoGPT, minGPT, The Annotated Transformer and PyTorch's
tutorials use (torch-level functions and dtypes, Tensor methods, nn modules and losses, Module
methods and hooks, functional, init, nn.utils, optim and its schedulers, autograd, utils.data). A
name counts as present when the attribute exists at the same place under `minigrad` as under
`torch`; whether it behaves as PyTorch's is the tests' business (tests/test_torch_oracle*.py,
tests/test_torch_code.py).
"""
import argparse
import importlib
import sys

# group -> (where the names live, relative to the library; the names)
CENSUS = {
    "torch-level functions": ("", """
        tensor as_tensor from_numpy is_tensor empty zeros ones full zeros_like ones_like full_like randn rand randint
        randperm multinomial manual_seed normal arange linspace eye tril triu triu_indices
        cat stack split chunk unbind where matmul mm bmm einsum outer exp log sqrt rsqrt sin cos tanh sigmoid relu
        erf abs pow clamp sum mean var std prod amax max min argmax norm logsumexp cumsum topk sort argsort
        softmax log_softmax flip roll repeat_interleave index_select masked_select gather scatter nonzero
        isnan isinf any all allclose equal numel reshape transpose permute unsqueeze squeeze flatten masked_fill
        no_grad enable_grad set_grad_enabled is_grad_enabled inference_mode save load
        set_default_dtype get_default_dtype set_num_threads get_num_threads device Tensor LongTensor FloatTensor
        autocast
        empty_like randn_like rand_like randint_like logspace set_printoptions Size strided preserve_format
    """),
    "dtypes": ("", "float16 float32 float64 float double half int32 int64 long int uint8 bool"),
    "cuda": ("cuda", "is_available"),
    "Tensor methods": ("Tensor", """
        data grad requires_grad grad_fn is_leaf shape dtype ndim device is_cuda size dim numel item tolist numpy
        detach requires_grad_ retain_grad backward register_hook to cpu cuda float double half int long
        bool type type_as clone contiguous is_contiguous stride view view_as reshape transpose t permute unsqueeze
        squeeze expand expand_as flatten repeat split chunk unbind
        exp log sqrt rsqrt sin cos tanh sigmoid relu abs pow clamp sum mean var std prod amax max min argmax
        norm logsumexp cumsum topk sort argsort softmax log_softmax masked_fill masked_fill_ flip roll
        repeat_interleave index_select masked_select gather scatter scatter_ index_fill_ nonzero multinomial
        isnan isinf any all equal mm bmm matmul outer
        fill_ zero_ copy_ normal_ uniform_ add_ mul_ new_zeros new_ones new_full new_tensor bfloat16
        t_ transpose_ unsqueeze_ squeeze_
    """),
    "nn modules and losses": ("nn", """
        Module Parameter Linear LazyLinear Embedding LayerNorm Dropout ReLU GELU SiLU Tanh Sigmoid Softmax LogSoftmax
        Identity Flatten Sequential ModuleList ModuleDict ParameterList ParameterDict
        MultiheadAttention TransformerEncoderLayer TransformerEncoder TransformerDecoderLayer TransformerDecoder
        Transformer CrossEntropyLoss NLLLoss KLDivLoss MSELoss L1Loss BCEWithLogitsLoss
    """),
    "Module methods and hooks": ("nn.Module", """
        forward parameters named_parameters buffers named_buffers children named_children modules named_modules
        train eval zero_grad state_dict load_state_dict register_buffer register_parameter add_module apply
        to cpu cuda float double half requires_grad_ get_submodule get_parameter
        register_forward_hook register_forward_pre_hook
    """),
    "nn.functional": ("nn.functional", """
        softmax log_softmax relu gelu silu tanh sigmoid dropout linear embedding layer_norm
        scaled_dot_product_attention cross_entropy nll_loss kl_div mse_loss l1_loss
        binary_cross_entropy_with_logits pad one_hot normalize
    """),
    "torch math and scans (#33)": ("", """
        inf nan pi e newaxis add sub mul div true_divide floor_divide remainder fmod copysign floor ceil round trunc
        frac sign sgn tan sinh cosh asin acos atan atan2 asinh acosh atanh log2 log10 log1p exp2 expm1 lerp
        logaddexp xlogy hypot reciprocal cumprod cummax cummin logcumsumexp diagonal diag_embed diag trace dot vdot
        inner isclose ctc_loss geqrf svd_lowrank pca_lowrank lobpcg
    """),
    "Tensor math and scans (#33)": ("Tensor", """
        floor ceil round trunc frac fmod remainder tan sinh cosh asin acos atan atan2 log2 log10 log1p exp2 expm1
        lerp logaddexp xlogy hypot reciprocal cumprod cummax cummin logcumsumexp diagonal diag_embed trace dot
        unfold floor_ log1p_ lerp_ reciprocal_ geqrf
    """),
    "F activations and losses (#33)": ("nn.functional", """
        elu selu celu softplus softsign mish hardtanh hardswish hardsigmoid leaky_relu relu6 logsigmoid tanhshrink
        softshrink hardshrink glu prelu rrelu threshold gumbel_softmax softmin binary_cross_entropy huber_loss
        smooth_l1_loss cosine_similarity pairwise_distance triplet_margin_loss margin_ranking_loss
        hinge_embedding_loss soft_margin_loss multilabel_soft_margin_loss poisson_nll_loss gaussian_nll_loss
        cosine_embedding_loss ctc_loss multi_head_attention_forward
    """),
    "nn activations and losses (#33)": ("nn", """
        ELU SELU CELU Softplus Softsign Mish Hardtanh Hardswish Hardsigmoid LeakyReLU ReLU6 LogSigmoid Tanhshrink
        Softshrink Hardshrink GLU PReLU RReLU Threshold Softmin Softmax2d CosineSimilarity PairwiseDistance
        Unflatten BCELoss HuberLoss SmoothL1Loss SoftMarginLoss MultiLabelSoftMarginLoss PoissonNLLLoss
        GaussianNLLLoss MarginRankingLoss HingeEmbeddingLoss CosineEmbeddingLoss TripletMarginLoss CTCLoss
        AdaptiveLogSoftmaxWithLoss
    """),
    "nn.init": ("nn.init", """
        normal_ uniform_ zeros_ ones_ constant_ xavier_uniform_ xavier_normal_ kaiming_uniform_ kaiming_normal_
        trunc_normal_ orthogonal_
    """),
    "nn.utils": ("nn.utils", "clip_grad_norm_ clip_grad_value_ parameters_to_vector vector_to_parameters"),
    "nn.utils.rnn": ("nn.utils.rnn", "pad_sequence"),
    "utils.checkpoint": ("utils.checkpoint", "checkpoint checkpoint_sequential"),
    "optim": ("optim", "Optimizer SGD Adam AdamW RMSprop Adagrad"),
    "optimizer methods": ("optim.Optimizer", "step zero_grad state_dict load_state_dict add_param_group"),
    "lr_scheduler": ("optim.lr_scheduler", """
        LambdaLR StepLR MultiStepLR ExponentialLR CosineAnnealingLR OneCycleLR LinearLR SequentialLR
        ReduceLROnPlateau
    """),
    "autograd": ("autograd", "Function grad backward gradcheck"),
    # the extending guide and the autograd notes (issue 31)
    "autograd.graph": ("autograd.graph", "saved_tensors_hooks save_on_cpu"),
    "torch.func": ("func", "grad grad_and_value vjp jacrev hessian vmap functional_call"),
    "Tensor methods of the extending guide": ("Tensor", "new index_add index_add_ sin_ cos_ exp_ log_"),
    "nn.DataParallel": ("nn", "DataParallel"),
    "utils.data": ("utils.data", """
        Dataset TensorDataset DataLoader random_split Subset Sampler SequentialSampler RandomSampler BatchSampler
    """),
}

# attributes an instance sets in __init__ (PyTorch's Tensor and Module have them only on instances)
INSTANCE_ATTRIBUTES = {"Tensor": {"data", "grad", "requires_grad", "grad_fn", "is_leaf", "shape", "dtype",
                                  "ndim", "device", "is_cuda"}}


def owner(library, where):
    """The object the names of a group are looked up on: library.where (an instance for Tensor)."""
    obj = library
    for part in filter(None, where.split(".")):
        if not hasattr(obj, part):
            try:  # a submodule that the package does not import by itself
                obj = importlib.import_module(f"{obj.__name__}.{part}")
                continue
            except (ImportError, AttributeError):
                return None
        obj = getattr(obj, part)
    return obj


def has_name(library, where, name):
    if name in INSTANCE_ATTRIBUTES.get(where, ()):
        return hasattr(library.zeros(2), name)
    found = owner(library, where)
    return found is not None and hasattr(found, name)


def census(library):
    """{group: (present names, missing names)} for a library module (minigrad or torch)."""
    result = {}
    for group, (where, names) in CENSUS.items():
        present, missing = [], []
        for name in names.split():
            (present if has_name(library, where, name) else missing).append(name)
        result[group] = (present, missing)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the names minigrad lacks")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if any name is missing")
    parser.add_argument("--check-torch", action="store_true", help="first check the list against PyTorch")
    args = parser.parse_args(argv)

    if args.check_torch:
        import torch

        not_torch = [f"{CENSUS[g][0] or 'torch'}.{n}" for g, (_, missing) in census(torch).items() for n in missing]
        if not_torch:
            print(f"not PyTorch names (fix the list): {', '.join(not_torch)}")
            return 1
        print(f"every listed name exists in PyTorch {torch.__version__}")

    import minigrad

    total_present = total = 0
    for group, (present, missing) in census(minigrad).items():
        n = len(present) + len(missing)
        total_present, total = total_present + len(present), total + n
        line = f"{group:<26} {len(present):>3}/{n}"
        if missing and args.missing:
            line += "   missing: " + " ".join(missing)
        print(line)
    print(f"{'total':<26} {total_present:>3}/{total} present")
    return 1 if args.strict and total_present < total else 0


if __name__ == "__main__":
    sys.exit(main())
