"""Rewrite recipes: source transformations that launch parameters cannot make (a row read
once instead of once per pass, two launches fused, a two-stage reduction collapsed, K split,
a tile order), one file each behind `Recipe`, offered to the search by `RecipeStrategy`."""

from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.strategy import RECIPES, RecipeStrategy, recipes_in

__all__ = ["RECIPES", "Recipe", "RecipeStrategy", "Rewrite", "recipes_in"]
