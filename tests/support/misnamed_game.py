"""A test-only plugin module whose exact variable breaks the naming rule
(``expected_value``, not ``exact_expected_value``): defining its Game fails."""

from dataclasses import replace

from boardsweep.core.games import Variable, get_game

GAME = replace(get_game("toy"), name="misnamed",
               exact_variables={"expected_value": Variable(("location",), "float64", "uniform")})
