"""Chutes and Ladders as a boardsweep plugin game.

Installed with pip, this distribution registers the game ``chutes_ladders``
through the ``boardsweep.games`` entry point; boardsweep itself is unchanged.
"""
