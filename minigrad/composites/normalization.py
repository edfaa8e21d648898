"""Layer normalisation and Lp normalisation, composed from mean, subtraction, rsqrt, norm and division."""
from . import composite


@composite
def layer_norm(x, weight, bias, n_dims, eps):
    # mean = E[x],  var = E[(x - mean)^2] (biased),  both over the last n_dims dims
    # x_hat = (x - mean) / sqrt(var + eps),  y = x_hat * weight + bias
    dims = tuple(range(x.ndim - n_dims, x.ndim))
    centered = x - x.mean(dims, keepdim=True)
    var = (centered * centered).mean(dims, keepdim=True)
    x_hat = centered * (var + eps).rsqrt()
    y = x_hat if weight is None else x_hat * weight
    return y if bias is None else y + bias


def normalize(x, p, dim, eps):
    # y = x / max(||x||_p, eps), the norm taken along dim (a zero vector stays zero: it is divided by eps)
    return x / x.norm(p, dim, keepdim=True).clamp(min=eps)
