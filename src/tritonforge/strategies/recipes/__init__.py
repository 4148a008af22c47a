"""Rewrite recipes: source transformations that launch parameters cannot make (a row read
once instead of once per pass, or its max and sum in one online pass, its last pass walked
backwards, two launches fused, a two-stage reduction collapsed, a summing loop split across
programs, a tile order, tensor-descriptor loads, several rows a program (unrolled, or as one
tile), a persistent grid, mask and cache hints), one file each behind `Recipe`, offered to
the search by `RecipeStrategy`."""

from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.strategy import RECIPES, RecipeStrategy, recipes_in

__all__ = ["RECIPES", "Recipe", "RecipeStrategy", "Rewrite", "recipes_in"]
