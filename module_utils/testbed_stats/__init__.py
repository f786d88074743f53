# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The statistics (controller): core (summary, Student t, Welch, ratios), fairness (Jain), fidelity (TOST)."""
