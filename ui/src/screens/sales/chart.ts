// The parts of Chart.js a bar chart of revenue needs, registered once. Imported by name (not
// chart.js/auto) so the bundle carries no line, pie or radar code; the Sales screen loads
// this module when it first draws, so the app's first screen does not carry it at all.
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

export { Chart };
